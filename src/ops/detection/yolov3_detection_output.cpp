// Yolov3DetectionOutput (ncnn; YOLOv3/v4 heads).
// Params: 0 num_class 20, 1 num_box 5 (boxes per scale), 2 confidence_threshold 0.01,
// 3 nms_threshold 0.45, 4 biases (anchor (w, h) pairs in input pixels),
// 5 mask (anchor index per box, num_box per input, in input order; float words,
// see detection::float_words_param), 6 anchors_scale (per input: network
// size / grid size).
// Inputs: one grid per scale, (num_box * (5 + num_class), h, w); per box the
// channels are x, y, w, h, objectness, then the class logits.
// Per cell and box b of input s: label = first class with the largest logit;
// confidence = 1 / (1 + e^-obj * (1 + e^-cls)) — ncnn's parenthesisation, not
// sigmoid(obj) * sigmoid(cls) — kept when >= confidence_threshold. With
// anchor a = mask[s * num_box + b], net_w = int(anchors_scale[s] * w) (likewise
// h): centre ((j + sigmoid(x)) / w, (i + sigmoid(y)) / h), size
// (exp(w) * biases[2a] / net_w, exp(h) * biases[2a + 1] / net_h). All candidates
// are sorted by confidence and go through one class-agnostic NMS where
// intersection > nms_threshold * union suppresses; there is no top-k.
// Output rows (label + 1, score, x1, y1, x2, y2), normalised; (0, 6) when none —
// see detection::write_detections.
#include <cfloat>
#include <cmath>

#include "ops/registry.h"
#include "ops/detection/nms.h"
#include "ops/common/op_util.h"
#include "ops/detection/yolo.h"
#include "ops/detection/yolo_plan.h"

namespace kestrel {

namespace {

using detection::CellScore;

// The label is the first class with the largest logit cls; the confidence
// 1 / (1 + e^-obj * (1 + e^-cls)) as ncnn parenthesises it.
struct LogitScore {
    int num_class;

    CellScore operator()(const float* ch, int64_t plane, int64_t at) const
    {
        CellScore s;
        float cls = -FLT_MAX;
        for (int q = 0; q < num_class; ++q) {
            const float v = ch[(5 + q) * plane + at];
            if (v > cls) {
                s.label = q;
                cls = v;
            }
        }
        const float obj = ch[4 * plane + at];
        s.confidence = 1.f / (1.f + std::exp(-obj) * (1.f + std::exp(-cls)));
        return s;
    }
};

class Yolov3DetectionOutput : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        p_.read(pd);
        const std::vector<float> mask = detection::float_words_param(pd, 5);
        anchors_scale_ = pd.get_floats(6);
        const int64_t anchors = static_cast<int64_t>(p_.biases.size() / 2);
        mask_.clear();
        for (float m : mask) {
            // ncnn truncates the float to an int index.
            check(std::isfinite(m) && m >= 0.f && m < static_cast<float>(anchors), "mask (param 5) entry ", m,
                  " is not an anchor index: biases (param 4) hold ", anchors, " (w, h) pairs");
            mask_.push_back(static_cast<int>(m));
        }
        for (float s : anchors_scale_)
            check(std::isfinite(s) && s > 0.f, "anchors_scale (param 6) entries must be > 0, got ", s);
    }

    bool dynamic_output_shape() const override { return true; }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(!in.empty(), "expects at least one input");
        expect_output_count(out, 1);
        const size_t num_box = static_cast<size_t>(p_.num_box);
        check(mask_.size() >= in.size() * num_box, "mask (param 5) has ", mask_.size(), " entries; ", in.size(),
              " input(s) x num_box ", num_box, " need ", in.size() * num_box);
        check(anchors_scale_.size() >= in.size(), "anchors_scale (param 6) has ", anchors_scale_.size(),
              " entries, one per input needs ", in.size());
        int64_t bound = 0;
        for (size_t b = 0; b < in.size(); ++b) {
            p_.check_input(in[b], b);
            const Shape& s = in[b].shape;
            const Net n = net_size(b, s);
            check(n.w > 0 && n.h > 0, "input ", b, " ", shape_str(s), " with anchors_scale ", anchors_scale_[b],
                  " gives a network size of ", n.w, "x", n.h);
            bound += p_.candidate_bound(s);
        }
        out[0] = TensorDesc{{bound, 6}, DType::F32};
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        std::vector<detection::Candidate> all;
        for (size_t b = 0; b < in.size(); ++b) {
            const Net net = net_size(b, in[b].shape());
            // Box k of input b uses anchor mask[b * num_box + k]; sizes are in network pixels.
            const size_t first = b * static_cast<size_t>(p_.num_box);
            const std::vector<detection::Candidate> found = detection::yolo_grid_candidates(
                in[b], p_, static_cast<float>(net.w), static_cast<float>(net.h),
                [&](int64_t k) { return mask_[first + static_cast<size_t>(k)]; }, LogitScore{p_.num_class}, true,
                ctx);
            all.insert(all.end(), found.begin(), found.end());
        }
        detection::sort_by_score_like_ncnn(all);
        detection::write_detections(detection::nms_sorted(all, p_.nms_threshold, detection::IouTest::Product), 1.f,
                                    out);
    }

    bool plan(const std::vector<TensorDesc>& in, YoloPlan& p) const
    {
        p.num_class = p_.num_class, p.num_box = p_.num_box;
        p.confidence_threshold = p_.confidence_threshold, p.nms_threshold = p_.nms_threshold;
        p.grids.clear();
        for (size_t b = 0; b < in.size(); ++b) {
            const Net net = net_size(b, in[b].shape);
            YoloPlan::Grid g{static_cast<float>(net.w), static_cast<float>(net.h), {}};
            for (int64_t k = 0; k < p_.num_box; ++k) {
                const size_t a = static_cast<size_t>(mask_[b * static_cast<size_t>(p_.num_box) + static_cast<size_t>(k)]);
                g.anchors.push_back(p_.biases[2 * a]);
                g.anchors.push_back(p_.biases[2 * a + 1]);
            }
            p.grids.push_back(std::move(g));
        }
        return true;
    }

private:
    struct Net {
        int64_t w = 0, h = 0;
    };
    // ncnn truncates anchors_scale * grid size to an int.
    Net net_size(size_t input, const Shape& s) const
    {
        const float scale = anchors_scale_[input];
        auto trunc = [](float v) -> int64_t { return v < 2147483648.f ? static_cast<int>(v) : 0; };
        return Net{trunc(scale * static_cast<float>(s[2])), trunc(scale * static_cast<float>(s[1]))};
    }

    detection::YoloParams p_;
    std::vector<float> anchors_scale_;
    std::vector<int> mask_;
};

} // namespace

bool yolov3_plan(const Op& op, const std::vector<TensorDesc>& in, YoloPlan& plan)
{
    const auto* yolo = dynamic_cast<const Yolov3DetectionOutput*>(&op);
    return yolo != nullptr && yolo->plan(in, plan);
}

std::unique_ptr<Op> make_yolov3_detection_output() { return std::make_unique<Yolov3DetectionOutput>(); }

} // namespace kestrel
