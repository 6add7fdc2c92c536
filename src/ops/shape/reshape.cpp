// Reshape (ncnn): params 0=w 1=h 11=d 2=c (-233 absent, 0 copies the input's
// dim, -1 is inferred) or 6=shape expression listing w,h,(d),c from the shapes
// of one or more inputs. The output is a view of input 0.
// 12=input_batch_axis 13=output_batch_axis (233 = none) select ncnn's
// batch-aware form: the target is read outermost first with a batch axis
// inserted at those positions, and 0 copies the input dim at the same index.
// Our tensors carry no batch, so the batch is 1 in and must resolve to 1 out.
#include "graph/expression.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

#include <limits>

namespace kestrel {

namespace {

constexpr int kAbsent = -233;
constexpr int kNoBatchAxis = 233;
// Which of [w,h,d,c] a rank uses: rank 3 is (w,h,c), without d.
const std::vector<int> kAxesOfRank[4] = {{0}, {0, 1}, {0, 1, 3}, {0, 1, 2, 3}};

class Reshape : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        in_batch_axis_ = pd.get_int(12, kNoBatchAxis);
        out_batch_axis_ = pd.get_int(13, kNoBatchAxis);
        const std::string text = pd.get_string(6, "");
        if (!text.empty()) {
            expr_ = Expression::parse(text);
            has_expr_ = true;
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
        check(rank > 0, "needs at least param 0 (w) or 6 (shape expression)");
        target_ = {w, h, d, c};
        rank_ = rank;
        for (int i : kAxesOfRank[rank - 1])
            check(target_[i] >= -1, "dims must be > 0, 0 (copy) or -1 (infer), got ", target_[i]);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const size_t inputs = has_expr_ ? std::max(1, expr_.blob_count()) : 1;
        expect_input_count(in, inputs, inputs);
        expect_output_count(out, 1);
        if (in_batch_axis_ != kNoBatchAxis || out_batch_axis_ != kNoBatchAxis) {
            out[0] = TensorDesc{};
            out[0].shape = resolve_batch(in);
            out[0].dtype = in[0].dtype;
            return;
        }
        std::vector<int64_t> wh_dc(4, 1);
        int rank = rank_;
        if (has_expr_) {
            std::vector<Shape> shapes;
            for (const auto& d : in) shapes.push_back(d.shape);
            const std::vector<int> list = expr_.eval_list(shapes);
            check(list.size() >= 1 && list.size() <= 4, "shape expression gives ", list.size(), " dims, expected 1-4");
            rank = static_cast<int>(list.size());
            // List order is w,h,(d),c: the last one is c for ranks 3 and 4.
            for (int i = 0; i < rank; ++i) wh_dc[rank == 3 && i == 2 ? 3 : i] = list[i];
        } else {
            for (int i = 0; i < 4; ++i) wh_dc[i] = target_[i];
        }
        out[0] = TensorDesc{};
        out[0].shape = resolve(in[0].shape, rank, wh_dc);
        out[0].dtype = in[0].dtype;
    }

    bool outputs_alias_input() const override { return true; }
    void forward(const std::vector<Tensor>&, std::vector<Tensor>&, const ExecContext&) const override {}

private:
    // Applies the 0 (copy) and -1 (infer) rules; wh_dc is [w,h,d,c].
    static Shape resolve(const Shape& input, int rank, std::vector<int64_t> wh_dc)
    {
        const int64_t total = shape_numel(input);
        if (input.size() >= 1 && input.size() <= 4) {
            const NcnnDims src = ncnn_dims(input);
            const int64_t src_dims[4] = {src.w, src.h, src.d, src.c};
            for (int i = 0; i < 4; ++i)
                if (wh_dc[i] == 0) wh_dc[i] = src_dims[i];
        }
        int infer_at = -1;
        int64_t known = 1;
        for (int i : kAxesOfRank[rank - 1]) {
            check(wh_dc[i] >= -1, "bad target dim ", wh_dc[i]);
            if (wh_dc[i] == -1) {
                check(infer_at < 0, "more than one -1 in the target shape");
                infer_at = i;
            } else {
                if (wh_dc[i] > 0 && known > std::numeric_limits<int64_t>::max() / wh_dc[i])
                    fail("cannot reshape ", shape_str(input), ": the target dims overflow int64");
                known *= wh_dc[i];
            }
        }
        if (infer_at >= 0) {
            check(known > 0 && total % known == 0, "cannot infer -1: ", total, " elements do not divide by ", known);
            wh_dc[infer_at] = total / known;
            known *= wh_dc[infer_at];
        }
        const Shape out = shape_from_ncnn(rank, wh_dc[0], wh_dc[1], wh_dc[2], wh_dc[3]);
        check(known == total, "cannot reshape ", shape_str(input), " (", total, " elements) to ", shape_str(out));
        return out;
    }

    // ncnn's batch-aware form with batch 1: logical shapes are outermost first
    // with the batch axis inserted; 0 copies the logical input dim at the same index.
    Shape resolve_batch(const std::vector<TensorDesc>& in) const
    {
        const Shape& physical = in[0].shape;
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
        if (has_expr_) {
            std::vector<Shape> shapes;
            for (const auto& d : in) shapes.push_back(d.shape);
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
        const int64_t total = shape_numel(physical);
        int64_t known = 1;
        int infer_at = -1;
        for (int i = 0; i < out_rank; ++i) {
            if (target[i] == 0) {
                check(i < static_cast<int>(logical.size()), "target dim ", i, " is 0 (copy) but the input has only ",
                      logical.size(), " dims");
                target[i] = logical[i];
            }
            if (target[i] == -1) {
                check(infer_at < 0, "more than one -1 in the target shape");
                infer_at = i;
                continue;
            }
            check(target[i] > 0, "bad target dim ", target[i]);
            if (known > std::numeric_limits<int64_t>::max() / target[i])
                fail("cannot reshape ", shape_str(physical), ": the target dims overflow int64");
            known *= target[i];
        }
        if (infer_at >= 0) {
            check(total % known == 0, "cannot infer -1: ", total, " elements do not divide by ", known);
            target[infer_at] = total / known;
            known *= target[infer_at];
        }
        check(known == total, "cannot reshape ", shape_str(physical), " (", total, " elements) to ", shape_str(target));
        Shape out;
        for (int i = 0; i < out_rank; ++i) {
            if (i == out_axis) {
                check(target[i] == 1, "the output batch axis resolves to ", target[i],
                      "; batched tensors (n > 1) are not supported");
                continue;
            }
            out.push_back(target[i]);
        }
        check(!out.empty() && out.size() <= 4, "the output would have ", out.size(), " dims besides the batch");
        return out;
    }

    int in_batch_axis_ = kNoBatchAxis, out_batch_axis_ = kNoBatchAxis;
    bool has_expr_ = false;
    Expression expr_;
    std::vector<int> target_;
    int rank_ = 0;
};

} // namespace

std::unique_ptr<Op> make_reshape() { return std::make_unique<Reshape>(); }

} // namespace kestrel
