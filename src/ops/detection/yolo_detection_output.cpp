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
#include <algorithm>
#include <cmath>

#include "ops/registry.h"
#include "ops/detection/nms.h"
#include "ops/common/op_util.h"
#include "ops/detection/yolo.h"
#include "ops/detection/yolo_plan.h"

namespace kestrel {

namespace {

using detection::CellScore;

// Softmax over the class channels; the label is the first class with the largest
// probability, the confidence sigmoid(objectness) times that probability.
class SoftmaxScore {
public:
    explicit SoftmaxScore(int num_class) : prob_(static_cast<size_t>(num_class)) {}

    CellScore operator()(const float* ch, int64_t plane, int64_t at)
    {
        const int num_class = static_cast<int>(prob_.size());
        float mx = -INFINITY;
        for (int q = 0; q < num_class; ++q) mx = std::max(mx, ch[(5 + q) * plane + at]);
        float sum = 0.f;
        for (int q = 0; q < num_class; ++q) {
            prob_[static_cast<size_t>(q)] = std::exp(ch[(5 + q) * plane + at] - mx);
            sum += prob_[static_cast<size_t>(q)];
        }
        CellScore s;
        float best = 0.f;
        for (int q = 0; q < num_class; ++q) {
            const float pq = prob_[static_cast<size_t>(q)] / sum;
            if (pq > best) {
                s.label = q;
                best = pq;
            }
        }
        s.confidence = detection::sigmoid(ch[4 * plane + at]) * best;
        return s;
    }

private:
    std::vector<float> prob_; // scratch
};

class YoloDetectionOutput : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        p_.read(pd);
        check(p_.biases.size() >= 2 * static_cast<size_t>(p_.num_box),
              "biases (param 4) need a (w, h) pair per box: ", 2 * int64_t{p_.num_box}, " values, got ", p_.biases.size());
    }

    bool dynamic_output_shape() const override { return true; }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(!in.empty(), "expects at least one input");
        expect_output_count(out, 1);
        int64_t bound = 0;
        for (size_t b = 0; b < in.size(); ++b) {
            p_.check_input(in[b], b);
            bound += p_.candidate_bound(in[b].shape);
        }
        out[0] = TensorDesc{{bound, 6}, DType::F32};
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        std::vector<detection::Candidate> all;
        for (const Tensor& t : in) {
            // Box b uses anchor b; sizes are in grid cells.
            const std::vector<detection::Candidate> found = detection::yolo_grid_candidates(
                t, p_, static_cast<float>(t.dim(2)), static_cast<float>(t.dim(1)), [](int64_t b) { return b; },
                SoftmaxScore(p_.num_class), false, ctx);
            all.insert(all.end(), found.begin(), found.end());
        }
        detection::sort_by_score_like_ncnn(all);
        detection::write_detections(detection::nms_sorted(all, p_.nms_threshold, detection::IouTest::Ratio), 1.f, out);
    }

    bool plan(const std::vector<TensorDesc>& in, YoloPlan& p) const
    {
        p.num_class = p_.num_class, p.num_box = p_.num_box, p.v2 = true;
        p.confidence_threshold = p_.confidence_threshold, p.nms_threshold = p_.nms_threshold;
        p.grids.clear();
        for (const TensorDesc& d : in) {
            // Box b uses anchor b; sizes are in grid cells.
            YoloPlan::Grid g{static_cast<float>(d.shape[2]), static_cast<float>(d.shape[1]), {}};
            g.anchors.assign(p_.biases.begin(), p_.biases.begin() + 2 * p_.num_box);
            p.grids.push_back(std::move(g));
        }
        return true;
    }

private:
    detection::YoloParams p_;
};

} // namespace

bool yolov2_plan(const Op& op, const std::vector<TensorDesc>& in, YoloPlan& plan)
{
    const auto* yolo = dynamic_cast<const YoloDetectionOutput*>(&op);
    return yolo != nullptr && yolo->plan(in, plan);
}

std::unique_ptr<Op> make_yolo_detection_output() { return std::make_unique<YoloDetectionOutput>(); }

} // namespace kestrel
