// OneHot (ONNX): input 0 indices (any numeric dtype; negative count from
// depth's end; out-of-range gives an all-off row), input 1 depth (one numeric
// value, truncated), input 2 values [off, on] (any dtype, the output's). The
// output inserts a depth-long axis at 0=axis (default -1, counted in the
// output's rank). Param 20=dynamic (see common/tensor_util.cpp).
#include <cmath>
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

int64_t depth_of(const Tensor& t)
{
    check(t.numel() == 1, "depth (input 1) must hold one value, got shape ", shape_str(t.shape()));
    const double v = t.to(DType::F64).data<double>()[0];
    check(std::isfinite(v) && v >= 1 && v < 1e15, "depth (input 1) must be >= 1, got ", v);
    return static_cast<int64_t>(v);
}

class OneHot : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, -1);
        dynamic_ = pd.get_int(20, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 3);
        expect_output_count(out, 1);
        check(shape_numel(in[2].shape) == 2, "values (input 2) must hold [off, on], got shape ", shape_str(in[2].shape));
        check(in[0].dtype != DType::Bool, "indices (input 0) must be numeric");
        if (!in[1].value.defined() && dynamic_) {
            out[0] = TensorDesc(out_shape(in[0].shape, 1), in[2].dtype); // placeholder
            return;
        }
        out[0] = TensorDesc(out_shape(in[0].shape, depth_of(nd::known_value(in[1], "depth (input 1)"))), in[2].dtype);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1, 2); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const int64_t depth = depth_of(in[1]);
        const Shape s = out_shape(in[0].shape(), depth);
        if (out[0].shape() != s) out[0] = Tensor(s, in[2].dtype());
        const int a = nd::normalize_axis(axis_, static_cast<int64_t>(s.size()), "axis (param 0)");
        const int64_t outer = nd::dims_product(s, 0, static_cast<size_t>(a));
        const int64_t inner = nd::dims_product(s, static_cast<size_t>(a) + 1, s.size());
        const Tensor idx = in[0].to(DType::F64);
        const double* iv = idx.data<double>();
        const size_t es = dtype_size(in[2].dtype());
        const uint8_t* off = static_cast<const uint8_t*>(in[2].raw());
        const uint8_t* on = off + es;
        uint8_t* o = static_cast<uint8_t*>(out[0].raw());
        for (int64_t p = 0; p < outer; ++p)
            for (int64_t d = 0; d < depth; ++d)
                for (int64_t q = 0; q < inner; ++q) {
                    double i = std::trunc(iv[p * inner + q]);
                    if (i < 0) i += static_cast<double>(depth);
                    const bool hot = i == static_cast<double>(d);
                    std::memcpy(o + static_cast<size_t>((p * depth + d) * inner + q) * es, hot ? on : off, es);
                }
    }

private:
    Shape out_shape(const Shape& in, int64_t depth) const
    {
        const int64_t r = static_cast<int64_t>(in.size()) + 1;
        const int a = nd::normalize_axis(axis_, r, "axis (param 0)");
        Shape s = in;
        s.insert(s.begin() + a, depth);
        return s;
    }
    int axis_ = -1;
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_one_hot() { return std::make_unique<OneHot>(); }

} // namespace kestrel
