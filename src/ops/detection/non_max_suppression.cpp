// NonMaxSuppression (ONNX): greedy per-class NMS over boxes (batch, boxes, 4)
// float32 and scores (batch, classes, boxes) float32. Optional inputs (empty
// tensor or left off: the default): 2 max_output_boxes_per_class (integer,
// default 0: nothing selected), 3 iou_threshold (float, default 0, in [0, 1]),
// 4 score_threshold (float; default: no score filter). A box is a candidate
// when its score is above score_threshold (and not NaN); candidates go by descending score
// (ties: lower box index first) and a candidate is dropped when its IoU with
// an already selected box of the class exceeds iou_threshold.
// Param 0=center_point_box: 0 boxes are [y1, x1, y2, x2] (any two opposite
// corners), 1 [x_center, y_center, width, height].
// Output: int64 (selected, 3) rows [batch, class, box], by batch, then class,
// then selection order. The row count depends on the data:
// dynamic_output_shape(); infer() gives the bound batch*classes*boxes.
#include <algorithm>
#include <cmath>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/detection/nms.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

using detection::Candidate;

float float_scalar(const Tensor& t, const char* what)
{
    check(t.numel() == 1 && dtype_is_float(t.dtype()), what, " must be one float, got ", dtype_name(t.dtype()), " ",
          shape_str(t.shape()));
    return visit_dtype(t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        return static_cast<float>(to_double(t.data<T>()[0]));
    });
}

class NonMaxSuppression : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        center_point_box_ = pd.get_int(0, 0);
        check(center_point_box_ == 0 || center_point_box_ == 1, "center_point_box (param 0) must be 0 or 1, got ",
              center_point_box_);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 5);
        expect_output_count(out, 1);
        expect_f32(in[0], "boxes (input 0)");
        expect_f32(in[1], "scores (input 1)");
        const Shape &b = in[0].shape, &s = in[1].shape;
        check(b.size() == 3 && b[2] == 4, "boxes (input 0) must be (batch, boxes, 4), got ", shape_str(b));
        check(s.size() == 3 && s[0] == b[0] && s[2] == b[1], "scores (input 1) must be (", b[0], ", classes, ", b[1],
              "), got ", shape_str(s));
        for (size_t i = 2; i < in.size(); ++i)
            check(shape_numel(in[i].shape) <= 1, "input ", i, " must hold at most one value, got ",
                  shape_str(in[i].shape));
        out[0] = TensorDesc({s[0] * s[1] * s[2], 3}, DType::I64);
    }
    bool dynamic_output_shape() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const int64_t batches = in[1].dim(0), classes = in[1].dim(1), boxes = in[1].dim(2);
        const int64_t max_out = present(in, 2) ? nd::int_values(in[2], "max_output_boxes_per_class (input 2)")[0] : 0;
        const float iou = present(in, 3) ? float_scalar(in[3], "iou_threshold (input 3)") : 0.f;
        check(iou >= 0.f && iou <= 1.f, "iou_threshold (input 3) must be in [0, 1], got ", iou);
        std::vector<int64_t> rows;
        for (int64_t b = 0; b < batches; ++b) {
            const std::vector<Candidate> all = candidates(in[0].data<float>() + b * boxes * 4, boxes);
            for (int64_t c = 0; c < classes; ++c) {
                const float* scores = in[1].data<float>() + (b * classes + c) * boxes;
                for (int64_t box : select(all, scores, in, iou, max_out)) rows.insert(rows.end(), {b, c, box});
            }
        }
        Tensor t({static_cast<int64_t>(rows.size() / 3), 3}, DType::I64);
        std::copy(rows.begin(), rows.end(), t.data<int64_t>());
        out[0] = t;
    }

private:
    static bool present(const std::vector<Tensor>& in, size_t i) { return i < in.size() && in[i].numel() > 0; }

    // Boxes as corners; `label` carries the box index through the NMS helper.
    std::vector<Candidate> candidates(const float* p, int64_t n) const
    {
        std::vector<Candidate> v(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i, p += 4) {
            Candidate& c = v[static_cast<size_t>(i)];
            // Two opposite corners (y, x) in either format.
            const float y0 = center_point_box_ ? p[1] - p[3] / 2 : p[0], x0 = center_point_box_ ? p[0] - p[2] / 2 : p[1];
            const float y1 = center_point_box_ ? p[1] + p[3] / 2 : p[2], x1 = center_point_box_ ? p[0] + p[2] / 2 : p[3];
            c.ymin = std::min(y0, y1);
            c.ymax = std::max(y0, y1);
            c.xmin = std::min(x0, x1);
            c.xmax = std::max(x0, x1);
            c.area = detection::corner_area(c);
            c.label = static_cast<int>(i);
        }
        return v;
    }

    // Selected box indices of one (batch, class), in selection order.
    static std::vector<int64_t> select(const std::vector<Candidate>& all, const float* scores,
                                       const std::vector<Tensor>& in, float iou, int64_t max_out)
    {
        if (max_out <= 0) return {};
        const bool filter = present(in, 4);
        const float min_score = filter ? float_scalar(in[4], "score_threshold (input 4)") : 0.f;
        std::vector<Candidate> sorted;
        for (const Candidate& c : all) {
            const float s = scores[c.label];
            if (std::isnan(s) || (filter && !(s > min_score))) continue; // NaN cannot be ranked
            sorted.push_back(c);
            sorted.back().score = s;
        }
        std::stable_sort(sorted.begin(), sorted.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
        std::vector<int64_t> picked;
        // Ratio test: a zero-area box has IoU 0 (or NaN) with anything, so it never suppresses nor is suppressed.
        for (const Candidate& c : detection::nms_sorted(sorted, iou, detection::IouTest::Ratio)) {
            if (static_cast<int64_t>(picked.size()) == max_out) break;
            picked.push_back(c.label);
        }
        return picked;
    }

    int center_point_box_ = 0;
};

} // namespace

std::unique_ptr<Op> make_non_max_suppression() { return std::make_unique<NonMaxSuppression>(); }

} // namespace kestrel
