// YoloDetectionOutput (ncnn; YOLOv2 region layer).
// Params: 0 num_class 20, 1 num_box 5, 2 confidence_threshold 0.01,
// 3 nms_threshold 0.45, 4 biases (float array, a (w, h) pair per box, in
// grid cells).
// Inputs: one or more grids (num_box * (5 + num_class), h, w); per box the
// channels are x, y, w, h, objectness, then the class scores.
// Per cell and box: class probabilities = softmax over the class channels;
// label = first class with the largest probability; confidence =
// sigmoid(objectness) * probability, kept when >= confidence_threshold. The box
// is centre ((j + sigmoid(x)) / w, (i + sigmoid(y)) / h), size
// (exp(w) * bias_w / w, exp(h) * bias_h / h). All candidates of all inputs
// are sorted by confidence and go through one class-agnostic NMS
// (IoU > nms_threshold suppresses); there is no top-k.
// Output rows (label + 1, score, xmin, ymin, xmax, ymax); (0, 6) when none —
// see detection::write_detections. (ncnn computes this layer in place and,
// when nothing is detected, hands back input 0 with its class channels
// softmaxed; we return the empty table like the other detection layers.)
#include <cmath>

#include "ops/builtin_ops.h"
#include "ops/nms.h"
#include "ops/op_util.h"

namespace kestrel {

namespace {

using detection::Candidate;

float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

class YoloDetectionOutput : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        num_class_ = pd.get_int(0, 20);
        num_box_ = pd.get_int(1, 5);
        confidence_threshold_ = pd.get_float(2, 0.01f);
        nms_threshold_ = pd.get_float(3, 0.45f);
        biases_ = pd.get_floats(4);
        check(num_class_ >= 1, "num_class (param 0) must be >= 1, got ", num_class_);
        check(num_box_ >= 1, "num_box (param 1) must be >= 1, got ", num_box_);
        check(biases_.size() >= 2 * static_cast<size_t>(num_box_), "biases (param 4) need a (w, h) pair per box: ",
              2 * num_box_, " values, got ", biases_.size());
        check(std::isfinite(confidence_threshold_), "confidence_threshold (param 2) must be finite");
        check(std::isfinite(nms_threshold_), "nms_threshold (param 3) must be finite");
    }

    bool dynamic_output_shape() const override { return true; }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(!in.empty(), "expects at least one input");
        expect_output_count(out, 1);
        int64_t bound = 0;
        for (size_t b = 0; b < in.size(); ++b) {
            expect_f32(in[b]);
            const Shape& s = in[b].shape;
            check(s.size() == 3, "input ", b, " must be (num_box * (5 + num_class), h, w), got ", shape_str(s));
            check(s[0] == static_cast<int64_t>(num_box_) * (5 + num_class_), "input ", b, " ", shape_str(s), " has ",
                  s[0], " channels; num_box ", num_box_, " x (5 + num_class ", num_class_, ") = ",
                  static_cast<int64_t>(num_box_) * (5 + num_class_));
            bound += num_box_ * s[1] * s[2];
        }
        out[0] = TensorDesc{{bound, 6}, DType::F32};
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        std::vector<Candidate> all;
        for (const Tensor& t : in) {
            const int64_t h = t.dim(1), w = t.dim(2), plane = h * w;
            const int64_t per_box = 5 + num_class_;
            std::vector<std::vector<Candidate>> found(static_cast<size_t>(num_box_));
            ctx.parallel_for(num_box_, [&](int64_t begin, int64_t end) {
                std::vector<float> prob(static_cast<size_t>(num_class_));
                for (int64_t pp = begin; pp < end; ++pp) {
                    const float* ch = t.data<float>() + pp * per_box * plane;
                    const float bias_w = biases_[static_cast<size_t>(2 * pp)];
                    const float bias_h = biases_[static_cast<size_t>(2 * pp + 1)];
                    for (int64_t i = 0; i < h; ++i) {
                        for (int64_t j = 0; j < w; ++j) {
                            const int64_t at = i * w + j;
                            // softmax over the class channels at this cell
                            float mx = -INFINITY;
                            for (int q = 0; q < num_class_; ++q) mx = std::max(mx, ch[(5 + q) * plane + at]);
                            float sum = 0.f;
                            for (int q = 0; q < num_class_; ++q) {
                                prob[static_cast<size_t>(q)] = std::exp(ch[(5 + q) * plane + at] - mx);
                                sum += prob[static_cast<size_t>(q)];
                            }
                            int label = 0;
                            float best = 0.f;
                            for (int q = 0; q < num_class_; ++q) {
                                const float pq = prob[static_cast<size_t>(q)] / sum;
                                if (pq > best) {
                                    label = q;
                                    best = pq;
                                }
                            }
                            const float confidence = sigmoid(ch[4 * plane + at]) * best;
                            if (!(confidence >= confidence_threshold_)) continue;
                            const float cx = (static_cast<float>(j) + sigmoid(ch[at])) / static_cast<float>(w);
                            const float cy = (static_cast<float>(i) + sigmoid(ch[plane + at])) / static_cast<float>(h);
                            const float bw = std::exp(ch[2 * plane + at]) * bias_w / static_cast<float>(w);
                            const float bh = std::exp(ch[3 * plane + at]) * bias_h / static_cast<float>(h);
                            Candidate c;
                            c.xmin = cx - bw * 0.5f;
                            c.ymin = cy - bh * 0.5f;
                            c.xmax = cx + bw * 0.5f;
                            c.ymax = cy + bh * 0.5f;
                            c.score = confidence;
                            c.label = label;
                            c.area = detection::corner_area(c);
                            found[static_cast<size_t>(pp)].push_back(c);
                        }
                    }
                }
            });
            for (const auto& v : found) all.insert(all.end(), v.begin(), v.end());
        }
        detection::sort_by_score_like_ncnn(all);
        detection::write_detections(detection::nms_sorted(all, nms_threshold_, detection::IouTest::Ratio), 1.f, out);
    }

private:
    int num_class_ = 20, num_box_ = 5;
    float confidence_threshold_ = 0.01f, nms_threshold_ = 0.45f;
    std::vector<float> biases_;
};

} // namespace

std::unique_ptr<Op> make_yolo_detection_output() { return std::make_unique<YoloDetectionOutput>(); }

} // namespace kestrel
