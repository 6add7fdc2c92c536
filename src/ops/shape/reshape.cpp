// Reshape: input 0 (any dtype) seen with another shape of the same element
// count. The target comes in one of four forms; in each, 0 copies an input dim
// and one -1 is inferred from the element count.
//   ncnn dims     0=w 1=h 11=d 2=c (-233 absent): the rank is given by which
//                 are present; a 0 copies the input's dim of the same ncnn
//                 name (w, h, d or c).
//   ncnn expr     6=shape expression listing w,h,(d),c from the shapes of one
//                 or more inputs (each input it names is a bottom).
//   ncnn batch    12=input_batch_axis 13=output_batch_axis (233 = none) with
//                 dims or expr: the target is read outermost first with a
//                 batch axis at those positions, and 0 copies the input dim at
//                 the same index. Our tensors carry no batch, so the batch is 1
//                 in and must resolve to 1 out.
//   shape input   none of 0 and 6, and input 1 the target (1-D integers,
//                 outermost first, as ONNX's Reshape): 0 copies the input dim
//                 at the same index, unless 21=allowzero=1 (then 0 is a real
//                 zero dim); 20=dynamic=1 accepts a target known only at run
//                 time (see common/tensor_util.cpp).
// The output is a view of input 0 (with dynamic=1, a copy: its shape may be
// known only at run time).
#include <cstring>
#include <limits>

#include "ops/common/expression.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

constexpr int kAbsent = -233;
constexpr int kNoBatchAxis = 233;
// Which of [w,h,d,c] a rank uses: rank 3 is (w,h,c), without d.
const std::vector<int> kAxesOfRank[4] = {{0}, {0, 1}, {0, 1, 3}, {0, 1, 2, 3}};

// `target` (outermost first, 0s already resolved, at most one -1) with the -1
// inferred; throws unless the element counts agree.
Shape infer_minus_one(std::vector<int64_t> target, const Shape& input)
{
    const int64_t total = shape_numel(input);
    int64_t known = 1;
    int infer_at = -1;
    for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] == -1) {
            check(infer_at < 0, "more than one -1 in the target shape ", shape_str(target));
            infer_at = static_cast<int>(i);
            continue;
        }
        check(target[i] >= 0, "bad target dim ", target[i], " in ", shape_str(target));
        if (target[i] > 0 && known > std::numeric_limits<int64_t>::max() / target[i])
            fail("cannot reshape ", shape_str(input), ": the target dims overflow int64");
        known *= target[i];
    }
    if (infer_at >= 0) {
        check(known != 0 && total % known == 0, "cannot reshape ", shape_str(input), " (", total, " elements) to ",
              shape_str(target), ": they do not divide by ", known);
        target[static_cast<size_t>(infer_at)] = total / known;
        known = total;
    }
    check(known == total, "cannot reshape ", shape_str(input), " (", total, " elements) to ", shape_str(target));
    return target;
}

class Reshape : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        in_batch_axis_ = pd.get_int(12, kNoBatchAxis);
        out_batch_axis_ = pd.get_int(13, kNoBatchAxis);
        allowzero_ = pd.get_int(21, 0) != 0;
        dynamic_ = pd.get_int(20, 0) != 0;
        const std::string text = pd.get_string(6, "");
        if (!text.empty()) {
            expr_ = Expression::parse(text);
            form_ = Form::Expression;
            return;
        }
        const int w = pd.get_int(0, kAbsent), h = pd.get_int(1, kAbsent), d = pd.get_int(11, kAbsent),
                  c = pd.get_int(2, kAbsent);
        // ncnn derives the rank from which params are present.
        int rank = 4;
        if (d == kAbsent) rank = 3;
        if (c == kAbsent) rank = 2;
        if (h == kAbsent) rank = 1;
        if (w == kAbsent) rank = 0;
        if (rank == 0) {
            form_ = Form::ShapeInput;
            check(in_batch_axis_ == kNoBatchAxis && out_batch_axis_ == kNoBatchAxis,
                  "batch axes (params 12, 13) need param 0 (w) or 6 (shape expression)");
            return;
        }
        form_ = Form::Dims;
        target_ = {w, h, d, c};
        rank_ = rank;
        for (int i : kAxesOfRank[rank - 1])
            check(target_[i] >= -1, "dims must be > 0, 0 (copy) or -1 (infer), got ", target_[i]);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        check(form_ != Form::ShapeInput || in.size() == 2,
              "needs param 0 (w), param 6 (shape expression) or the target shape as input 1");
        if (form_ == Form::Expression)
            expect_expression_inputs(in, input_count());
        else
            expect_input_count(in, input_count(), input_count());
        expect_output_count(out, 1);
        if (form_ == Form::ShapeInput) {
            check(in[1].shape.size() == 1, "shape (input 1) must be 1-D, got ", shape_str(in[1].shape));
            if (!in[1].value.defined() && dynamic_) {
                // Placeholder of the right rank and element count; forward() gives the real shape.
                Shape s(static_cast<size_t>(in[1].shape[0]), 1);
                if (!s.empty()) s[0] = shape_numel(in[0].shape);
                out[0] = TensorDesc(s, in[0].dtype);
                return;
            }
            out[0] = TensorDesc(from_shape_input(in[0].shape, nd::known_value(in[1], "shape (input 1)")), in[0].dtype);
            return;
        }
        std::vector<Shape> shapes;
        for (const auto& d : in) shapes.push_back(d.shape);
        const bool batch = in_batch_axis_ != kNoBatchAxis || out_batch_axis_ != kNoBatchAxis;
        out[0] = TensorDesc(batch ? resolve_batch(shapes) : resolve_ncnn(shapes), in[0].dtype);
    }

    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    bool outputs_alias_input() const override { return !dynamic_; }
    bool dynamic_output_shape() const override { return dynamic_; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        // Only with dynamic=1 (otherwise the output is a view made by the runtime).
        const Shape s = from_shape_input(in[0].shape(), in[1]);
        if (out[0].shape() != s) out[0] = Tensor(s, in[0].dtype());
        std::memcpy(out[0].raw(), in[0].raw(), in[0].nbytes());
    }

private:
    enum class Form { Dims, Expression, ShapeInput };

    size_t input_count() const
    {
        if (form_ == Form::ShapeInput) return 2;
        return form_ == Form::Expression ? std::max(1, expr_.blob_count()) : 1;
    }

    // ONNX's rule: 0 copies the input dim at the same index (unless allowzero).
    Shape from_shape_input(const Shape& input, const Tensor& shape_value) const
    {
        std::vector<int64_t> target = nd::int_values(shape_value, "shape (input 1)");
        for (size_t i = 0; i < target.size(); ++i) {
            check(target[i] >= -1, "shape ", shape_str(target), " has a negative dim other than -1");
            if (target[i] == 0 && !allowzero_) {
                check(i < input.size(), "shape ", shape_str(target), ": 0 at index ", i,
                      " copies an input dim, but the input ", shape_str(input), " has rank ", input.size());
                target[i] = input[i];
            }
        }
        return infer_minus_one(target, input);
    }

    // ncnn's dims or expression form: 0 copies the input dim of the same ncnn name.
    Shape resolve_ncnn(const std::vector<Shape>& shapes) const
    {
        std::vector<int64_t> wh_dc(4, 1);
        int rank = rank_;
        if (form_ == Form::Expression) {
            const std::vector<int> list = expr_.eval_list(shapes);
            check(list.size() >= 1 && list.size() <= 4, "shape expression gives ", list.size(), " dims, expected 1-4");
            rank = static_cast<int>(list.size());
            // List order is w,h,(d),c: the last one is c for ranks 3 and 4.
            for (int i = 0; i < rank; ++i) wh_dc[rank == 3 && i == 2 ? 3 : i] = list[i];
        } else {
            for (int i = 0; i < 4; ++i) wh_dc[i] = target_[i];
        }
        const Shape& input = shapes[0];
        if (input.size() >= 1 && input.size() <= 4) {
            const NcnnDims src = ncnn_dims(input);
            const int64_t src_dims[4] = {src.w, src.h, src.d, src.c};
            for (int i = 0; i < 4; ++i)
                if (wh_dc[i] == 0) wh_dc[i] = src_dims[i];
        }
        for (int i : kAxesOfRank[rank - 1]) check(wh_dc[i] >= -1, "bad target dim ", wh_dc[i]);
        return infer_minus_one(shape_from_ncnn(rank, wh_dc[0], wh_dc[1], wh_dc[2], wh_dc[3]), input);
    }

    // ncnn's batch-aware form with batch 1: logical shapes are outermost first
    // with the batch axis inserted; 0 copies the logical input dim at the same index.
    Shape resolve_batch(const std::vector<Shape>& shapes) const
    {
        const Shape& physical = shapes[0];
        const int in_rank = static_cast<int>(physical.size());
        check(in_rank >= 1 && in_rank <= 4, "expects a rank 1-4 input, got ", shape_str(physical));
        Shape logical = physical;
        if (in_batch_axis_ != kNoBatchAxis) {
            const int a = in_batch_axis_ < 0 ? in_batch_axis_ + in_rank + 1 : in_batch_axis_;
            check(a >= 0 && a <= in_rank, "input_batch_axis (param 12) ", in_batch_axis_,
                  " is out of range for a rank ", in_rank, " input");
            logical.insert(logical.begin() + a, 1);
        }
        std::vector<int64_t> target;
        if (form_ == Form::Expression) {
            const std::vector<int> list = expr_.eval_list(shapes);
            target.assign(list.rbegin(), list.rend()); // the list is innermost first
        } else {
            static const int kOrder[4][4] = {{0}, {1, 0}, {3, 1, 0}, {3, 2, 1, 0}}; // outermost first, as [w,h,d,c] slots
            for (int i = 0; i < rank_; ++i) target.push_back(target_[kOrder[rank_ - 1][i]]);
        }
        const int out_rank = static_cast<int>(target.size());
        check(out_rank >= 1 && out_rank <= 5, "target shape has ", out_rank, " dims, expected 1-5");
        int out_axis = out_batch_axis_;
        if (out_axis != kNoBatchAxis) {
            if (out_axis < 0) out_axis += out_rank;
            check(out_axis >= 0 && out_axis < out_rank, "output_batch_axis (param 13) ", out_batch_axis_,
                  " is out of range for ", out_rank, " target dims");
        }
        for (int i = 0; i < out_rank; ++i)
            if (target[i] == 0) {
                check(i < static_cast<int>(logical.size()), "target dim ", i, " is 0 (copy) but the input has only ",
                      logical.size(), " dims");
                target[i] = logical[i];
            }
        const Shape resolved = infer_minus_one(target, physical);
        Shape out;
        for (int i = 0; i < out_rank; ++i) {
            if (i == out_axis) {
                check(resolved[i] == 1, "the output batch axis resolves to ", resolved[i],
                      "; batched tensors (n > 1) are not supported");
                continue;
            }
            out.push_back(resolved[i]);
        }
        check(!out.empty() && out.size() <= 4, "the output would have ", out.size(), " dims besides the batch");
        return out;
    }

    Form form_ = Form::Dims;
    int in_batch_axis_ = kNoBatchAxis, out_batch_axis_ = kNoBatchAxis;
    bool allowzero_ = false, dynamic_ = false;
    Expression expr_;
    std::vector<int> target_;
    int rank_ = 0;
};

} // namespace

std::unique_ptr<Op> make_reshape() { return std::make_unique<Reshape>(); }

} // namespace kestrel
