// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (ONNX).
//
// QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point).
//   Inputs: x (float32/float16/bfloat16/float64 or int32), scale (float, one
//   value or per-axis), optional zero_point (same shape as scale; its dtype is
//   y's). Params 0=axis (default 1, for a per-axis scale of length x.dim(axis)),
//   1=y dtype (code of DType) when there is no zero_point (default uint8).
//   y may be any integer dtype (int8, uint8, int16, uint16, int32).
// DequantizeLinear: y = (x - zero_point) * scale, y has scale's dtype.
//   Inputs: x (integer), scale, optional zero_point (x's dtype). Param 0=axis.
// DynamicQuantizeLinear: x float32 -> y uint8, y_scale float32 scalar,
//   y_zero_point uint8 scalar, from the range [min(0, min x), max(0, max x)]
//   mapped onto [0, 255] (an all-zero x gives scale 0, zero point 0, y 0).
// Quantizing with a zero scale saturates (x / 0 is +-inf); 0 / 0 and NaN give 0.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

bool present(const std::vector<TensorDesc>& in, size_t i) { return i < in.size() && shape_numel(in[i].shape) > 0; }
bool present(const std::vector<Tensor>& in, size_t i) { return i < in.size() && in[i].numel() > 0; }

// Which scale / zero point applies to element i of x: per tensor (one value)
// or per slice along `axis` (index (i / inner) % channels).
struct QuantGroups {
    int64_t channels = 1, inner = 1;
    int64_t of(int64_t i) const { return channels == 1 ? 0 : (i / inner) % channels; }
};

QuantGroups quant_groups(const Shape& x, const Shape& scale, int axis)
{
    QuantGroups g;
    if (shape_numel(scale) == 1) return g;
    check(scale.size() == 1, "scale must be one value or 1-D (per axis), got ", shape_str(scale));
    const int a = nd::normalize_axis(axis, static_cast<int64_t>(x.size()), "axis (param 0)");
    check(scale[0] == x[static_cast<size_t>(a)], "per-axis scale has ", scale[0], " values but x has ",
          x[static_cast<size_t>(a)], " along axis ", a);
    g.channels = scale[0];
    g.inner = nd::dims_product(x, static_cast<size_t>(a) + 1, x.size());
    return g;
}

void check_scale_and_zero_point(const std::vector<TensorDesc>& in, int axis)
{
    check(dtype_is_float(in[1].dtype), "scale (input 1) must be a float tensor, got ", dtype_name(in[1].dtype));
    check(shape_numel(in[1].shape) >= 1, "scale (input 1) is empty");
    quant_groups(in[0].shape, in[1].shape, axis);
    if (present(in, 2))
        check(in[2].shape == in[1].shape || (shape_numel(in[2].shape) == 1 && shape_numel(in[1].shape) == 1),
              "zero_point (input 2) shape ", shape_str(in[2].shape), " differs from scale's ", shape_str(in[1].shape));
}

// Values of a small tensor (scales, zero points) as floats.
std::vector<float> as_floats(const Tensor& t)
{
    std::vector<float> v(static_cast<size_t>(t.numel()));
    visit_dtype(t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(to_double(t.data<T>()[i]));
    });
    return v;
}

// x / scale rounded half to even, plus the zero point, saturated to Q.
template <class Q> Q quantize_value(float x, float scale, float zero_point)
{
    return saturate_cast<Q>(static_cast<double>(std::nearbyint(x / scale)) + zero_point);
}

// y = quantize(x) over a whole tensor; y's dtype is the quantized type.
void quantize(const Tensor& x, const std::vector<float>& scale, const std::vector<float>& zero_point,
              const QuantGroups& g, Tensor& y)
{
    const std::vector<float> xs = as_floats(x);
    visit_dtype(y.dtype(), [&](auto tag) {
        using Q = typename decltype(tag)::type;
        if constexpr (std::is_integral_v<Q> && !std::is_same_v<Q, bool>) {
            Q* out = y.data<Q>();
            for (int64_t i = 0; i < x.numel(); ++i) {
                const int64_t c = g.of(i);
                out[i] = quantize_value<Q>(xs[static_cast<size_t>(i)], scale[static_cast<size_t>(c)],
                                           zero_point.empty() ? 0.f : zero_point[static_cast<size_t>(c)]);
            }
        }
    });
}

class QuantizeLinear : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, 1);
        out_dtype_ = static_cast<DType>(pd.get_int(1, static_cast<int>(DType::U8)));
        check(nd::is_integer_dtype(out_dtype_) && dtype_size(out_dtype_) <= 4,
              "output dtype (param 1) must be an integer type of up to 32 bits");
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 3);
        expect_output_count(out, 1);
        check(dtype_is_float(in[0].dtype) || in[0].dtype == DType::I32, "x (input 0) must be float or int32, got ",
              dtype_name(in[0].dtype));
        check_scale_and_zero_point(in, axis_);
        const DType t = present(in, 2) ? in[2].dtype : out_dtype_;
        check(nd::is_integer_dtype(t) && dtype_size(t) <= 4,
              "zero_point (input 2) must be an integer type of up to 32 bits, got ", dtype_name(t));
        out[0] = TensorDesc(in[0].shape, t);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const std::vector<float> zp = present(in, 2) ? as_floats(in[2]) : std::vector<float>();
        quantize(in[0], as_floats(in[1]), zp, quant_groups(in[0].shape(), in[1].shape(), axis_), out[0]);
    }

private:
    int axis_ = 1;
    DType out_dtype_ = DType::U8;
};

class DequantizeLinear : public Op {
public:
    void load_param(const ParamDict& pd) override { axis_ = pd.get_int(0, 1); }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 3);
        expect_output_count(out, 1);
        check(nd::is_integer_dtype(in[0].dtype), "x (input 0) must be an integer tensor, got ", dtype_name(in[0].dtype));
        check_scale_and_zero_point(in, axis_);
        if (present(in, 2))
            check(in[2].dtype == in[0].dtype, "zero_point (input 2) must have x's dtype ", dtype_name(in[0].dtype),
                  ", got ", dtype_name(in[2].dtype));
        out[0] = TensorDesc(in[0].shape, in[1].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const QuantGroups g = quant_groups(in[0].shape(), in[1].shape(), axis_);
        const std::vector<float> scale = as_floats(in[1]);
        const std::vector<float> zp = present(in, 2) ? as_floats(in[2]) : std::vector<float>(scale.size(), 0.f);
        const std::vector<float> x = as_floats(in[0]);
        visit_dtype(out[0].dtype(), [&](auto tag) {
            using Y = typename decltype(tag)::type;
            Y* y = out[0].data<Y>();
            for (int64_t i = 0; i < in[0].numel(); ++i) {
                const size_t c = static_cast<size_t>(g.of(i));
                y[i] = convert_value<Y>((x[static_cast<size_t>(i)] - zp[c]) * scale[c]);
            }
        });
    }

private:
    int axis_ = 1;
};

class DynamicQuantizeLinear : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        check(!out.empty() && out.size() <= 3, "expects 1 to 3 outputs (y, y_scale, y_zero_point), got ", out.size());
        expect_f32(in[0], "x (input 0)");
        out[0] = TensorDesc(in[0].shape, DType::U8);
        if (out.size() > 1) out[1] = TensorDesc({}, DType::F32);
        if (out.size() > 2) out[2] = TensorDesc({}, DType::U8);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const float* x = in[0].data<float>();
        float lo = 0.f, hi = 0.f; // the range always includes 0
        for (int64_t i = 0; i < in[0].numel(); ++i) {
            lo = std::min(lo, x[i]);
            hi = std::max(hi, x[i]);
        }
        const float scale = (hi - lo) / 255.f;
        const uint8_t zp = scale == 0.f ? 0 : saturate_cast<uint8_t>(std::nearbyint(0.f - lo / scale));
        if (scale == 0.f) std::fill_n(out[0].data<uint8_t>(), in[0].numel(), uint8_t(0));
        else quantize(in[0], {scale}, {static_cast<float>(zp)}, QuantGroups(), out[0]);
        if (out.size() > 1) out[1].data<float>()[0] = scale;
        if (out.size() > 2) out[2].data<uint8_t>()[0] = zp;
    }
};

} // namespace

std::unique_ptr<Op> make_nd_quantize_linear() { return std::make_unique<QuantizeLinear>(); }
std::unique_ptr<Op> make_nd_dequantize_linear() { return std::make_unique<DequantizeLinear>(); }
std::unique_ptr<Op> make_nd_dynamic_quantize_linear() { return std::make_unique<DynamicQuantizeLinear>(); }

} // namespace kestrel
