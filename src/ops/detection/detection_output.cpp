// DetectionOutput (ncnn): SSD box decoding, per-class NMS and top-k.
// Params: 0 num_class (-233 = MXNet layout, classes from the confidence shape),
// 1 nms_threshold 0.05, 2 nms_top_k 300, 3 keep_top_k 100, 4 confidence_threshold 0.5,
// 5-8 variances 0.1 0.1 0.2 0.2 (used by the MXNet layout only; the Caffe layout
// reads them from the priorbox's second row). A negative top-k (Caffe writes
// keep_top_k -1 for "keep all") means no limit; ncnn would fail on it.
// Inputs: loc (4 per prior), conf, priorbox.
//   Caffe: priorbox (2, 4 * num_prior) [boxes; variances], conf num_prior x num_class.
//   MXNet: priorbox (num_prior, 4), conf (num_class, num_prior).
// Class 0 is the background. A prior whose background score is
// >= 1 - confidence_threshold is not decoded and yields no detection. Each
// class keeps the candidates scoring > confidence_threshold, the nms_top_k best,
// then NMS (IoU > nms_threshold suppresses); all classes are merged, sorted by
// score and cut to keep_top_k.
// Output rows (label, score, xmin, ymin, xmax, ymax); (0, 6) when none — see
// detection::write_detections for the data-dependent row count.
#include <algorithm>
#include <cmath>

#include "ops/registry.h"
#include "ops/detection/nms.h"
#include "ops/detection/ssd_plan.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

using detection::Candidate;

constexpr int kMxnet = -233;

struct Layout {
    int64_t num_prior = 0;
    int64_t num_class = 0;
    bool mxnet = false;
};

class DetectionOutput : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        num_class_ = pd.get_int(0, 0);
        nms_threshold_ = pd.get_float(1, 0.05f);
        nms_top_k_ = pd.get_int(2, 300);
        keep_top_k_ = pd.get_int(3, 100);
        confidence_threshold_ = pd.get_float(4, 0.5f);
        variances_[0] = pd.get_float(5, 0.1f);
        variances_[1] = pd.get_float(6, 0.1f);
        variances_[2] = pd.get_float(7, 0.2f);
        variances_[3] = pd.get_float(8, 0.2f);
        check(num_class_ >= 1 || num_class_ == kMxnet,
              "num_class (param 0) must be >= 1 (background included) or -233 (MXNet layout), got ", num_class_);
        check(nms_top_k_ >= -1, "nms_top_k (param 2) must be >= 0 or -1 (no limit), got ", nms_top_k_);
        check(keep_top_k_ >= -1, "keep_top_k (param 3) must be >= 0 or -1 (no limit), got ", keep_top_k_);
        check(std::isfinite(nms_threshold_), "nms_threshold (param 1) must be finite, got ", nms_threshold_);
        check(std::isfinite(confidence_threshold_), "confidence_threshold (param 4) must be finite, got ",
              confidence_threshold_);
    }

    bool dynamic_output_shape() const override { return true; }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 3);
        expect_output_count(out, 1);
        expect_f32(in[0], "loc (input 0)");
        expect_f32(in[1], "conf (input 1)");
        expect_f32(in[2], "priorbox (input 2)");
        const Layout l = layout(in[0].shape, in[1].shape, in[2].shape);
        // Each foreground class keeps at most min(nms_top_k, num_prior) boxes.
        int64_t per_class = l.num_prior;
        if (nms_top_k_ >= 0) per_class = std::min<int64_t>(per_class, nms_top_k_);
        int64_t bound = per_class * (l.num_class - 1);
        if (keep_top_k_ >= 0) bound = std::min<int64_t>(bound, keep_top_k_);
        out[0] = TensorDesc{{bound, 6}, DType::F32};
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Layout l = layout(in[0].shape(), in[1].shape(), in[2].shape());
        const float* loc = in[0].data<float>();
        const float* conf = in[1].data<float>();
        const float* prior = in[2].data<float>();
        const float* prior_var = l.mxnet ? nullptr : prior + 4 * l.num_prior;
        const int64_t np = l.num_prior, nc = l.num_class;
        auto score_of = [&](int64_t prior_index, int64_t cls) {
            return l.mxnet ? conf[cls * np + prior_index] : conf[prior_index * nc + cls];
        };

        // Decode the priors whose background score leaves room for a detection.
        std::vector<float> boxes(static_cast<size_t>(4 * np));
        std::vector<char> decoded(static_cast<size_t>(np), 0);
        ctx.parallel_for(np, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                // ncnn compares in double here.
                if (static_cast<double>(score_of(i, 0)) >= 1.0 - static_cast<double>(confidence_threshold_)) continue;
                decoded[static_cast<size_t>(i)] = 1;
                const float* lc = loc + 4 * i;
                const float* pb = prior + 4 * i;
                const float* var = prior_var ? prior_var + 4 * i : variances_;
                const float pw = pb[2] - pb[0], ph = pb[3] - pb[1];
                const float pcx = (pb[0] + pb[2]) * 0.5f, pcy = (pb[1] + pb[3]) * 0.5f;
                const float cx = var[0] * lc[0] * pw + pcx;
                const float cy = var[1] * lc[1] * ph + pcy;
                const float bw = std::exp(var[2] * lc[2]) * pw;
                const float bh = std::exp(var[3] * lc[3]) * ph;
                float* b = &boxes[static_cast<size_t>(4 * i)];
                b[0] = cx - bw * 0.5f;
                b[1] = cy - bh * 0.5f;
                b[2] = cx + bw * 0.5f;
                b[3] = cy + bh * 0.5f;
            }
        });

        // Per foreground class: threshold, sort, nms_top_k, NMS.
        std::vector<std::vector<Candidate>> per_class(static_cast<size_t>(nc));
        ctx.parallel_for(nc - 1, [&](int64_t begin, int64_t end) {
            for (int64_t c = begin + 1; c < end + 1; ++c) {
                std::vector<Candidate> cands;
                for (int64_t j = 0; j < np; ++j) {
                    const float s = score_of(j, c);
                    if (!(s > confidence_threshold_) || !decoded[static_cast<size_t>(j)]) continue;
                    const float* b = &boxes[static_cast<size_t>(4 * j)];
                    Candidate cand;
                    cand.xmin = b[0];
                    cand.ymin = b[1];
                    cand.xmax = b[2];
                    cand.ymax = b[3];
                    cand.score = s;
                    cand.label = static_cast<int>(c);
                    cand.area = detection::corner_area(cand);
                    cands.push_back(cand);
                }
                detection::sort_by_score_like_ncnn(cands);
                if (nms_top_k_ >= 0 && static_cast<int64_t>(cands.size()) > nms_top_k_)
                    cands.resize(static_cast<size_t>(nms_top_k_));
                per_class[static_cast<size_t>(c)] =
                    detection::nms_sorted(cands, nms_threshold_, detection::IouTest::Ratio);
            }
        });

        std::vector<Candidate> all;
        for (int64_t c = 1; c < nc; ++c) {
            const auto& v = per_class[static_cast<size_t>(c)];
            all.insert(all.end(), v.begin(), v.end());
        }
        detection::sort_by_score_like_ncnn(all);
        if (keep_top_k_ >= 0 && static_cast<int64_t>(all.size()) > keep_top_k_) all.resize(static_cast<size_t>(keep_top_k_));
        detection::write_detections(all, 0.f, out);
    }

    bool plan(const std::vector<TensorDesc>& in, SsdPlan& p) const
    {
        const Layout l = layout(in[0].shape, in[1].shape, in[2].shape);
        p.num_prior = l.num_prior, p.num_class = l.num_class, p.mxnet = l.mxnet;
        p.confidence_threshold = confidence_threshold_, p.nms_threshold = nms_threshold_;
        p.nms_top_k = nms_top_k_, p.keep_top_k = keep_top_k_;
        // The smallest float a background score skips from: forward compares in double with 1 - threshold.
        const double limit = 1.0 - static_cast<double>(confidence_threshold_);
        float cut = static_cast<float>(limit);
        if (static_cast<double>(cut) < limit) cut = std::nextafter(cut, INFINITY);
        p.background_cut = cut;
        std::copy(variances_, variances_ + 4, p.variances);
        return true;
    }

private:
    Layout layout(const Shape& loc, const Shape& conf, const Shape& prior) const
    {
        Layout l;
        l.mxnet = num_class_ == kMxnet;
        const NcnnDims p = ncnn_dims(prior);
        const NcnnDims c = ncnn_dims(conf);
        if (l.mxnet) {
            check(p.w == 4 && p.d == 1 && p.c == 1,
                  "MXNet layout (num_class -233) needs priorbox (num_prior, 4), got ", shape_str(prior));
            l.num_prior = p.h;
            l.num_class = c.h;
            check(c.w == l.num_prior && c.d == 1 && c.c == 1, "MXNet layout needs conf (num_class, num_prior) = (*, ",
                  l.num_prior, "), got ", shape_str(conf));
            check(l.num_class >= 1, "conf ", shape_str(conf), " has no classes");
        } else {
            check(p.h == 2 && p.d == 1 && p.c == 1 && p.w % 4 == 0,
                  "priorbox must be (2, 4 * num_prior) (boxes and variances), got ", shape_str(prior));
            l.num_prior = p.w / 4;
            l.num_class = num_class_;
            check(shape_numel(conf) == l.num_prior * l.num_class, "conf ", shape_str(conf), " must hold num_prior x num_class = ",
                  l.num_prior, " x ", l.num_class, " scores");
        }
        check(shape_numel(loc) == 4 * l.num_prior, "loc ", shape_str(loc), " must hold 4 values per prior (",
              4 * l.num_prior, "), priorbox ", shape_str(prior));
        return l;
    }

    int num_class_ = 0;
    float nms_threshold_ = 0.05f;
    int nms_top_k_ = 300, keep_top_k_ = 100;
    float confidence_threshold_ = 0.5f;
    float variances_[4] = {0.1f, 0.1f, 0.2f, 0.2f};
};

} // namespace

bool ssd_plan(const Op& op, const std::vector<TensorDesc>& in, SsdPlan& plan)
{
    const auto* ssd = dynamic_cast<const DetectionOutput*>(&op);
    return ssd != nullptr && ssd->plan(in, plan);
}

std::unique_ptr<Op> make_detection_output() { return std::make_unique<DetectionOutput>(); }

} // namespace kestrel
