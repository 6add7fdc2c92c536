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

#include "ops/builtin_ops.h"
#include "ops/nms.h"
#include "ops/op_util.h"

namespace kestrel {

namespace {

using detection::Candidate;

float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

class Yolov3DetectionOutput : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        num_class_ = pd.get_int(0, 20);
        num_box_ = pd.get_int(1, 5);
        confidence_threshold_ = pd.get_float(2, 0.01f);
        nms_threshold_ = pd.get_float(3, 0.45f);
        biases_ = pd.get_floats(4);
        const std::vector<float> mask = detection::float_words_param(pd, 5);
        anchors_scale_ = pd.get_floats(6);
        check(num_class_ >= 1, "num_class (param 0) must be >= 1, got ", num_class_);
        check(num_box_ >= 1, "num_box (param 1) must be >= 1, got ", num_box_);
        check(std::isfinite(confidence_threshold_), "confidence_threshold (param 2) must be finite");
        check(std::isfinite(nms_threshold_), "nms_threshold (param 3) must be finite");
        const int64_t anchors = static_cast<int64_t>(biases_.size() / 2);
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
        check(mask_.size() >= in.size() * static_cast<size_t>(num_box_), "mask (param 5) has ", mask_.size(),
              " entries; ", in.size(), " input(s) x num_box ", num_box_, " need ", in.size() * num_box_);
        check(anchors_scale_.size() >= in.size(), "anchors_scale (param 6) has ", anchors_scale_.size(),
              " entries, one per input needs ", in.size());
        int64_t bound = 0;
        for (size_t b = 0; b < in.size(); ++b) {
            expect_f32(in[b]);
            const Shape& s = in[b].shape;
            check(s.size() == 3, "input ", b, " must be (num_box * (5 + num_class), h, w), got ", shape_str(s));
            check(s[0] == static_cast<int64_t>(num_box_) * (5 + num_class_), "input ", b, " ", shape_str(s), " has ",
                  s[0], " channels; num_box ", num_box_, " x (5 + num_class ", num_class_, ") = ",
                  static_cast<int64_t>(num_box_) * (5 + num_class_));
            const Net n = net_size(b, s);
            check(n.w > 0 && n.h > 0, "input ", b, " ", shape_str(s), " with anchors_scale ", anchors_scale_[b],
                  " gives a network size of ", n.w, "x", n.h);
            bound += num_box_ * s[1] * s[2];
        }
        out[0] = TensorDesc{{bound, 6}, DType::F32};
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        std::vector<Candidate> all;
        for (size_t b = 0; b < in.size(); ++b) {
            const Tensor& t = in[b];
            const int64_t h = t.dim(1), w = t.dim(2), plane = h * w;
            const int64_t per_box = 5 + num_class_;
            const Net net = net_size(b, t.shape());
            std::vector<std::vector<Candidate>> found(static_cast<size_t>(num_box_));
            ctx.parallel_for(num_box_, [&](int64_t begin, int64_t end) {
                for (int64_t pp = begin; pp < end; ++pp) {
                    const float* ch = t.data<float>() + pp * per_box * plane;
                    const int anchor = mask_[b * static_cast<size_t>(num_box_) + static_cast<size_t>(pp)];
                    const float bias_w = biases_[static_cast<size_t>(2 * anchor)];
                    const float bias_h = biases_[static_cast<size_t>(2 * anchor + 1)];
                    for (int64_t i = 0; i < h; ++i) {
                        for (int64_t j = 0; j < w; ++j) {
                            const int64_t at = i * w + j;
                            int label = 0;
                            float cls = -FLT_MAX;
                            for (int q = 0; q < num_class_; ++q) {
                                const float v = ch[(5 + q) * plane + at];
                                if (v > cls) {
                                    label = q;
                                    cls = v;
                                }
                            }
                            const float obj = ch[4 * plane + at];
                            const float confidence = 1.f / (1.f + std::exp(-obj) * (1.f + std::exp(-cls)));
                            if (!(confidence >= confidence_threshold_)) continue;
                            const float cx = (static_cast<float>(j) + sigmoid(ch[at])) / static_cast<float>(w);
                            const float cy = (static_cast<float>(i) + sigmoid(ch[plane + at])) / static_cast<float>(h);
                            const float bw = std::exp(ch[2 * plane + at]) * bias_w / static_cast<float>(net.w);
                            const float bh = std::exp(ch[3 * plane + at]) * bias_h / static_cast<float>(net.h);
                            Candidate c;
                            c.xmin = cx - bw * 0.5f;
                            c.ymin = cy - bh * 0.5f;
                            c.xmax = cx + bw * 0.5f;
                            c.ymax = cy + bh * 0.5f;
                            c.score = confidence;
                            c.label = label;
                            c.area = bw * bh; // the decoded size, as ncnn uses here
                            found[static_cast<size_t>(pp)].push_back(c);
                        }
                    }
                }
            });
            for (const auto& v : found) all.insert(all.end(), v.begin(), v.end());
        }
        detection::sort_by_score_like_ncnn(all);
        detection::write_detections(detection::nms_sorted(all, nms_threshold_, detection::IouTest::Product), 1.f, out);
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

    int num_class_ = 20, num_box_ = 5;
    float confidence_threshold_ = 0.01f, nms_threshold_ = 0.45f;
    std::vector<float> biases_, anchors_scale_;
    std::vector<int> mask_;
};

} // namespace

std::unique_ptr<Op> make_yolov3_detection_output() { return std::make_unique<Yolov3DetectionOutput>(); }

} // namespace kestrel
