// Compress (ONNX): keeps the slices of input 0 (any dtype) along 0=axis where
// input 1 condition (1-D bool) is true; with 1=has_axis=0 (the ONNX default
// without an axis) the input is flattened first. Condition entries past the
// axis size are ignored. The output size depends on the condition's values:
// dynamic_output_shape(); infer() gives the exact shape when the condition is
// known while planning, else an upper bound.
#include <algorithm>
#include <cstring>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Compress : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, 0);
        has_axis_ = pd.get_int(1, 1) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        check(in[1].dtype == DType::Bool, "condition (input 1) must be bool, got ", dtype_name(in[1].dtype));
        check(in[1].shape.size() == 1, "condition (input 1) must be 1-D, got ", shape_str(in[1].shape));
        Shape s = view(in[0].shape);
        const int a = axis(s);
        int64_t keep = std::min(s[static_cast<size_t>(a)], in[1].shape[0]);
        if (in[1].value.defined()) keep = static_cast<int64_t>(kept(in[1].value, s[static_cast<size_t>(a)]).size());
        s[static_cast<size_t>(a)] = keep;
        out[0] = TensorDesc(s, in[0].dtype);
    }
    bool dynamic_output_shape() const override { return true; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape d = view(in[0].shape());
        const int a = axis(d);
        const std::vector<int64_t> keep = kept(in[1], d[static_cast<size_t>(a)]);
        Shape s = d;
        s[static_cast<size_t>(a)] = static_cast<int64_t>(keep.size());
        if (out[0].shape() != s) out[0] = Tensor(s, in[0].dtype());
        const int64_t outer = nd::dims_product(d, 0, static_cast<size_t>(a));
        const int64_t n = d[static_cast<size_t>(a)];
        const size_t block = static_cast<size_t>(nd::dims_product(d, static_cast<size_t>(a) + 1, d.size())) *
                             dtype_size(in[0].dtype());
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        if (block == 0) return;
        for (int64_t o = 0; o < outer; ++o)
            for (size_t j = 0; j < keep.size(); ++j)
                std::memcpy(dst + (static_cast<size_t>(o) * keep.size() + j) * block,
                            src + static_cast<size_t>(o * n + keep[j]) * block, block);
    }

private:
    Shape view(const Shape& d) const { return has_axis_ ? d : Shape{shape_numel(d)}; }
    int axis(const Shape& s) const
    {
        return has_axis_ ? nd::normalize_axis(axis_, static_cast<int64_t>(s.size()), "axis (param 0)") : 0;
    }
    static std::vector<int64_t> kept(const Tensor& cond, int64_t n)
    {
        std::vector<int64_t> k;
        const bool* c = cond.data<bool>();
        for (int64_t i = 0; i < std::min(n, cond.numel()); ++i)
            if (c[i]) k.push_back(i);
        return k;
    }
    int axis_ = 0;
    bool has_axis_ = true;
};

} // namespace

std::unique_ptr<Op> make_compress() { return std::make_unique<Compress>(); }

} // namespace kestrel
