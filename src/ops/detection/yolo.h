// What the YOLO region layers (YoloDetectionOutput, Yolov3DetectionOutput)
// share: the common params, the input checks, and decoding one grid into
// candidates. They differ in the cell score, the anchor of a box and what the
// decoded size is divided by; those come in as arguments.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "kestrel/op.h"
#include "ops/detection/nms.h"
#include "ops/common/op_util.h"

namespace kestrel::detection {

inline float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

// Params 0 num_class (20), 1 num_box (5, boxes per input), 2
// confidence_threshold (0.01), 3 nms_threshold (0.45), 4 biases (anchor (w, h)
// pairs; their count is checked by each layer).
struct YoloParams {
    int num_class = 20, num_box = 5;
    float confidence_threshold = 0.01f, nms_threshold = 0.45f;
    std::vector<float> biases;

    void read(const ParamDict& pd)
    {
        num_class = pd.get_int(0, 20);
        num_box = pd.get_int(1, 5);
        confidence_threshold = pd.get_float(2, 0.01f);
        nms_threshold = pd.get_float(3, 0.45f);
        biases = pd.get_floats(4);
        check(num_class >= 1, "num_class (param 0) must be >= 1, got ", num_class);
        check(num_box >= 1, "num_box (param 1) must be >= 1, got ", num_box);
        check(std::isfinite(confidence_threshold), "confidence_threshold (param 2) must be finite");
        check(std::isfinite(nms_threshold), "nms_threshold (param 3) must be finite");
    }

    // Input b must be a float (num_box * (5 + num_class), h, w) grid.
    void check_input(const TensorDesc& d, size_t b) const
    {
        expect_f32(d);
        const Shape& s = d.shape;
        const int64_t channels = static_cast<int64_t>(num_box) * (5 + int64_t{num_class});
        check(s.size() == 3, "input ", b, " must be (num_box * (5 + num_class), h, w), got ", shape_str(s));
        check(s[0] == channels, "input ", b, " ", shape_str(s), " has ", s[0], " channels; num_box ", num_box,
              " x (5 + num_class ", num_class, ") = ", channels);
    }

    // Candidates of one input at most: one per box and cell.
    int64_t candidate_bound(const Shape& s) const { return num_box * s[1] * s[2]; }
};

// The confidence and label of one box in one cell.
struct CellScore {
    float confidence = 0.f;
    int label = 0;
};

// Candidates of one input grid t (num_box * (5 + num_class), h, w); per box
// the channels are x, y, w, h, objectness, then the classes. For box b with
// channels ch, `score(ch, plane, at)` rates the cell at flat position `at` (a
// copy of `score` per worker, so it may keep scratch space); a cell (i, j)
// whose confidence >= confidence_threshold gives the box centred at
// ((j + sigmoid(x)) / w, (i + sigmoid(y)) / h) of size
// (exp(w) * anchor_w / size_w, exp(h) * anchor_h / size_h), with
// (anchor_w, anchor_h) = biases[2a], biases[2a + 1] for a = anchor(b). NMS
// compares its corner area, or with decoded_area the decoded w * h (ncnn's
// Yolov3). Candidates come box-major, then row-major: the order that decides
// which of two equal-score boxes survives NMS.
template <class AnchorFn, class ScoreFn>
std::vector<Candidate> yolo_grid_candidates(const Tensor& t, const YoloParams& p, float size_w, float size_h,
                                            const AnchorFn& anchor, const ScoreFn& score, bool decoded_area,
                                            const ExecContext& ctx)
{
    const int64_t h = t.dim(1), w = t.dim(2), plane = h * w;
    const int64_t per_box = 5 + int64_t{p.num_class};
    std::vector<std::vector<Candidate>> found(static_cast<size_t>(p.num_box));
    ctx.parallel_for(p.num_box, [&](int64_t begin, int64_t end) {
        ScoreFn cell_score = score;
        for (int64_t b = begin; b < end; ++b) {
            const float* ch = t.data<float>() + b * per_box * plane;
            const size_t a = static_cast<size_t>(anchor(b));
            const float anchor_w = p.biases[2 * a], anchor_h = p.biases[2 * a + 1];
            for (int64_t i = 0; i < h; ++i) {
                for (int64_t j = 0; j < w; ++j) {
                    const int64_t at = i * w + j;
                    const CellScore s = cell_score(ch, plane, at);
                    if (!(s.confidence >= p.confidence_threshold)) continue;
                    const float cx = (static_cast<float>(j) + sigmoid(ch[at])) / static_cast<float>(w);
                    const float cy = (static_cast<float>(i) + sigmoid(ch[plane + at])) / static_cast<float>(h);
                    const float bw = std::exp(ch[2 * plane + at]) * anchor_w / size_w;
                    const float bh = std::exp(ch[3 * plane + at]) * anchor_h / size_h;
                    Candidate c;
                    c.xmin = cx - bw * 0.5f;
                    c.ymin = cy - bh * 0.5f;
                    c.xmax = cx + bw * 0.5f;
                    c.ymax = cy + bh * 0.5f;
                    c.score = s.confidence;
                    c.label = s.label;
                    c.area = decoded_area ? bw * bh : corner_area(c);
                    found[static_cast<size_t>(b)].push_back(c);
                }
            }
        }
    });
    std::vector<Candidate> all;
    for (const auto& v : found) all.insert(all.end(), v.begin(), v.end());
    return all;
}

} // namespace kestrel::detection
