// Views of input 0 (any dtype) with a computed shape:
//   Flatten     ncnn's form (no params): one row of every value. With 0=axis
//               (-r..r; ONNX's Flatten): (prod dims[:axis], prod dims[axis:]).
//   Squeeze     21=1 (ONNX's form): input 1 (optional) axes: removes those
//               size-1 dims; without it, every size-1 dim.
//   ExpandDims  21=1 (ONNX's Unsqueeze): input 1 axes (counted in the
//               output's rank): inserts size-1 dims.
// Axes are integer tensors; duplicates are errors. Squeeze and ExpandDims take
// 20=dynamic (see common/tensor_util.cpp): then the output is a copy whose
// shape may depend on axes known only at run time. ncnn's own params of
// Squeeze and ExpandDims (0/1/11/2 flags, 3=axes) are not read yet: such a
// layer is refused with a clear message.
#include <algorithm>
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
        check(pd.get_int(21, 0) == 1, "ncnn's ", kind_ == ViewKind::Squeeze ? "Squeeze" : "ExpandDims",
              " params (0, 1, 11, 2, 3) are not supported yet; the axes-input form needs 21=1");
        dynamic_ = pd.get_int(20, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, kind_ == ViewKind::Flatten ? 1 : 2);
        if (kind_ == ViewKind::Unsqueeze) check(in.size() == 2, "needs the axes input (input 1)");
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

    std::vector<int> axes_list(const Tensor& t, int64_t rank) const
    {
        check(t.rank() <= 1, "axes (input 1) must be 1-D, got ", shape_str(t.shape()));
        std::vector<int> axes;
        for (int64_t a : nd::int_values(t, "axes (input 1)")) axes.push_back(nd::normalize_axis(a, rank, "axis"));
        std::vector<int> sorted = axes;
        std::sort(sorted.begin(), sorted.end());
        check(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "axes (input 1) repeat an axis");
        return sorted;
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
            Shape s;
            if (axes == nullptr || axes->numel() == 0) { // no axes: every size-1 dim
                for (int64_t d : in)
                    if (d != 1) s.push_back(d);
                return s;
            }
            const std::vector<int> ax = axes_list(*axes, rank);
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
            const int64_t out_rank = rank + axes->numel();
            const std::vector<int> ax = axes_list(*axes, out_rank);
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
};

} // namespace

std::unique_ptr<Op> make_flatten() { return std::make_unique<ShapeView>(ViewKind::Flatten); }
std::unique_ptr<Op> make_squeeze() { return std::make_unique<ShapeView>(ViewKind::Squeeze); }
std::unique_ptr<Op> make_expand_dims() { return std::make_unique<ShapeView>(ViewKind::Unsqueeze); }

} // namespace kestrel
