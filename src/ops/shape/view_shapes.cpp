// Views of input 0 (any dtype) with a computed shape:
//   Flatten     ncnn's form (no params): one row of every value. With 0=axis
//               (-r..r; ONNX's Flatten): (prod dims[:axis], prod dims[axis:]).
//   Squeeze     21=1 (ONNX's form): input 1 (optional) axes: removes those
//               size-1 dims; without it, every size-1 dim.
//   ExpandDims  21=1 (ONNX's Unsqueeze): input 1 axes (counted in the
//               output's rank): inserts size-1 dims.
// Axes are integer tensors; duplicates are errors. Squeeze and ExpandDims take
// 20=dynamic (see common/tensor_util.cpp): then the output is a copy whose
// shape may depend on axes known only at run time.
// ncnn's forms (no 21), one input of rank 1-4, axes outermost first (ncnn's
// axis k is our axis k), negative from the end:
//   Squeeze     0=squeeze_w 1=squeeze_h 11=squeeze_d 2=squeeze_c flags, or
//               3=axes (int array, used when given). As in ncnn, an axis whose
//               size is not 1 is kept silently, d counts only for rank 4 and c
//               from rank 3, and squeezing every dim leaves shape (1).
//   ExpandDims  3=axes, counted in the output's rank (at most 4), as Unsqueeze.
#include <algorithm>
#include <array>
#include <cstring>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum class ViewKind { Flatten, Squeeze, Unsqueeze };

class ShapeView : public Op {
public:
    explicit ShapeView(ViewKind kind) : kind_(kind) {}
    void load_param(const ParamDict& pd) override
    {
        if (kind_ == ViewKind::Flatten) {
            all_ = !pd.has(0); // ncnn's Flatten: one row
            axis_ = pd.get_int(0, 0);
            return;
        }
        ncnn_ = pd.get_int(21, 0) == 0;
        dynamic_ = pd.get_int(20, 0) != 0;
        if (!ncnn_) return;
        check(!dynamic_, "20=1 (dynamic axes) needs the axes-input form 21=1");
        for (int a : pd.get_ints(3)) ncnn_axes_.push_back(a);
        squeeze_flags_ = {pd.get_int(0, 0) != 0, pd.get_int(1, 0) != 0, pd.get_int(11, 0) != 0, pd.get_int(2, 0) != 0};
        check(kind_ == ViewKind::Squeeze || !ncnn_axes_.empty(), "ExpandDims needs axes (param 3)");
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, kind_ == ViewKind::Flatten || ncnn_ ? 1 : 2);
        if (kind_ == ViewKind::Unsqueeze && !ncnn_) check(in.size() == 2, "needs the axes input (input 1)");
        expect_output_count(out, 1);
        if (in.size() == 2 && !in[1].value.defined() && dynamic_) {
            out[0] = TensorDesc(placeholder(in[0].shape, in[1].shape), in[0].dtype);
            return;
        }
        const Tensor* axes = in.size() == 2 ? &nd::known_value(in[1], "axes (input 1)") : nullptr;
        out[0] = TensorDesc(target(in[0].shape, axes), in[0].dtype);
    }
    bool outputs_alias_input() const override { return !dynamic_; }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape s = target(in[0].shape(), in.size() == 2 ? &in[1] : nullptr);
        if (out[0].shape() != s) out[0] = Tensor(s, in[0].dtype());
        std::memcpy(out[0].raw(), in[0].raw(), in[0].nbytes());
    }

private:
    // Unknown axes: same elements, rank guessed from the axes count.
    Shape placeholder(const Shape& in, const Shape& axes_shape) const
    {
        const int64_t n = shape_numel(axes_shape);
        Shape s = in;
        if (kind_ == ViewKind::Unsqueeze) s.insert(s.begin(), static_cast<size_t>(n), 1);
        return s;
    }

    // The axes (from input 1, or ncnn's param 3), in [0, rank), sorted.
    std::vector<int> axes_list(const Tensor* t, int64_t rank) const
    {
        std::vector<int64_t> given = ncnn_axes_;
        if (t != nullptr) {
            check(t->rank() <= 1, "axes (input 1) must be 1-D, got ", shape_str(t->shape()));
            given = nd::int_values(*t, "axes (input 1)");
        }
        std::vector<int> axes;
        for (int64_t a : given) axes.push_back(nd::normalize_axis(a, rank, "axis"));
        std::sort(axes.begin(), axes.end());
        check(std::adjacent_find(axes.begin(), axes.end()) == axes.end(), "the axes repeat an axis");
        return axes;
    }

    // ncnn's Squeeze: the size-1 dims among the flagged or listed ones go.
    Shape ncnn_squeeze(const Shape& in) const
    {
        const int64_t rank = static_cast<int64_t>(in.size());
        check(rank >= 1 && rank <= 4, "ncnn's Squeeze takes rank 1-4, got ", shape_str(in));
        std::vector<int> drop;
        if (!ncnn_axes_.empty()) {
            drop = axes_list(nullptr, rank);
        } else {
            const auto [w, h, d, c] = squeeze_flags_;
            if (w) drop.push_back(static_cast<int>(rank - 1));
            if (h && rank >= 2) drop.push_back(static_cast<int>(rank - 2));
            if (d && rank == 4) drop.push_back(1);
            if (c && rank >= 3) drop.push_back(0);
        }
        Shape s;
        for (int k = 0; k < rank; ++k)
            if (in[k] != 1 || std::find(drop.begin(), drop.end(), k) == drop.end()) s.push_back(in[k]);
        return s.empty() ? Shape{1} : s;
    }

    Shape target(const Shape& in, const Tensor* axes) const
    {
        const int64_t rank = static_cast<int64_t>(in.size());
        switch (kind_) {
        case ViewKind::Flatten: {
            if (all_) return {shape_numel(in)};
            check(axis_ >= -rank && axis_ <= rank, "axis (param 0) ", axis_, " is out of range for rank ", rank);
            const size_t a = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
            return {nd::dims_product(in, 0, a), nd::dims_product(in, a, in.size())};
        }
        case ViewKind::Squeeze: {
            if (ncnn_) return ncnn_squeeze(in);
            Shape s;
            if (axes == nullptr || axes->numel() == 0) { // no axes: every size-1 dim
                for (int64_t d : in)
                    if (d != 1) s.push_back(d);
                return s;
            }
            const std::vector<int> ax = axes_list(axes, rank);
            for (int k = 0; k < rank; ++k) {
                if (std::binary_search(ax.begin(), ax.end(), k)) {
                    check(in[k] == 1, "cannot squeeze axis ", k, " of ", shape_str(in), ": its size is not 1");
                    continue;
                }
                s.push_back(in[k]);
            }
            return s;
        }
        case ViewKind::Unsqueeze: {
            const int64_t out_rank = rank + (ncnn_ ? static_cast<int64_t>(ncnn_axes_.size()) : axes->numel());
            check(!ncnn_ || out_rank <= 4, "ncnn's ExpandDims makes at most rank 4; ", shape_str(in), " with ",
                  ncnn_axes_.size(), " axes would be rank ", out_rank);
            const std::vector<int> ax = axes_list(axes, out_rank);
            Shape s;
            size_t next = 0;
            for (int k = 0; k < out_rank; ++k)
                s.push_back(std::binary_search(ax.begin(), ax.end(), k) ? 1 : in[next++]);
            return s;
        }
        }
        fail("unknown view kind");
    }

    ViewKind kind_;
    int axis_ = 0;
    bool all_ = false; // Flatten to one row
    bool dynamic_ = false;
    bool ncnn_ = false; // ncnn's params, no axes input
    std::vector<int64_t> ncnn_axes_;
    std::array<bool, 4> squeeze_flags_{}; // w, h, d, c
};

} // namespace

std::unique_ptr<Op> make_flatten() { return std::make_unique<ShapeView>(ViewKind::Flatten); }
std::unique_ptr<Op> make_squeeze() { return std::make_unique<ShapeView>(ViewKind::Squeeze); }
std::unique_ptr<Op> make_expand_dims() { return std::make_unique<ShapeView>(ViewKind::Unsqueeze); }

} // namespace kestrel
