// Quantize: float to integers, in ncnn's form or ONNX's QuantizeLinear (20=1);
// DynamicQuantizeLinear (ONNX) quantizes with a scale it derives from x.
//
// ncnn's form: F32 -> I8, q = float2int8(x * scale) (round half away from
//   zero, clamp to [-127, 127]; quant/int8.h). 0=scale_data_size (1); weights
//   scale[size], one value or one per row (2-D) / channel (3-D, 4-D).
// ONNX's form (20=1): y = saturate(round_half_even(x / scale) + zero_point).
//   Inputs x (float or int32), scale (one value or per-axis), optional
//   zero_point (scale's shape; its dtype is y's). 21=axis (default 1) of a
//   per-axis scale, 22=y dtype (code of DType) without a zero point (default
//   uint8); y may be int8, uint8, int16, uint16 or int32. A zero scale
//   saturates (x / 0 is +-inf); 0 / 0 and NaN give 0.
// DynamicQuantizeLinear: x float32 -> y uint8, y_scale float32 scalar,
//   y_zero_point uint8 scalar, from the range [min(0, min x), max(0, max x)]
//   mapped onto [0, 255] (an all-zero x gives scale 1, zero point 0, y 0, as
//   ONNX Runtime gives).
#include <cmath>
#include <type_traits>

#include "kernels/int8_output.h"
#include "ops/quant/channel_values.h"
#include "ops/quant/int8.h"

namespace kestrel {

namespace {

// ONNX's rule: x / scale rounded half to even, plus the zero point, saturated to Q.
template <class Q> Q onnx_quantized(float x, float scale, float zero_point)
{
    return saturate_cast<Q>(static_cast<double>(std::nearbyint(x / scale)) + zero_point);
}

// ONNX's quantization of a whole tensor into y (whose dtype is the quantized type).
void onnx_quantize(const Tensor& x, const std::vector<float>& scale, const std::vector<float>& zero_point,
                   const ChannelGroups& g, Tensor& y, const ExecContext& ctx)
{
    if (x.dtype() == DType::F32 && (y.dtype() == DType::U8 || y.dtype() == DType::I8)) {
        // Bytes from floats: the vector kernel (the same bits).
        const bool u8 = y.dtype() == DType::U8;
        const Int8OutputKernel& kern = int8_output_kernel();
        for_each_block(g, x.numel(), ctx, [&](int64_t c, int64_t begin, int64_t end) {
            const int32_t zp = zero_point.empty() ? 0 : static_cast<int32_t>(zero_point[static_cast<size_t>(c)]);
            kern.quantize_even(x.data<float>() + begin, end - begin, scale[static_cast<size_t>(c)], zp, u8 ? 0 : -128,
                               u8 ? 255 : 127, static_cast<uint8_t*>(y.raw()) + begin);
        });
        return;
    }
    const std::vector<float> xs = values_as_floats(x);
    visit_dtype(y.dtype(), [&](auto tag) {
        using Q = typename decltype(tag)::type;
        if constexpr (std::is_integral_v<Q> && !std::is_same_v<Q, bool>) {
            Q* out = y.data<Q>();
            for_each_block(g, x.numel(), ctx, [&](int64_t c, int64_t begin, int64_t end) {
                const float s = scale[static_cast<size_t>(c)];
                const float zp = zero_point.empty() ? 0.f : zero_point[static_cast<size_t>(c)];
                for (int64_t i = begin; i < end; ++i) out[i] = onnx_quantized<Q>(xs[static_cast<size_t>(i)], s, zp);
            });
        }
    });
}

class Quantize : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        onnx_ = onnx_form(pd, "QuantizeLinear");
        if (!onnx_) {
            scale_.read_size(pd, 0, "scale_data_size", false);
            return;
        }
        axis_ = pd.get_int(21, 1);
        out_dtype_ = static_cast<DType>(pd.get_int(22, static_cast<int>(DType::U8)));
        check(nd::is_integer_dtype(out_dtype_) && dtype_size(out_dtype_) <= 4,
              "output dtype (param 22) must be an integer type of up to 32 bits");
    }
    void load_model(WeightReader& wr) override
    {
        if (!onnx_) scale_.load(wr);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        if (!onnx_) return infer_ncnn_rowwise(in, out, DType::F32, DType::I8, {&scale_});
        expect_input_count(in, 2, 3);
        expect_output_count(out, 1);
        check(dtype_is_float(in[0].dtype) || in[0].dtype == DType::I32, "x (input 0) must be float or int32, got ",
              dtype_name(in[0].dtype));
        check_onnx_scale_and_zero_point(in, axis_);
        const DType t = onnx_input_present(in, 2) ? in[2].dtype : out_dtype_;
        check(nd::is_integer_dtype(t) && dtype_size(t) <= 4,
              "zero_point (input 2) must be an integer type of up to 32 bits, got ", dtype_name(t));
        out[0] = TensorDesc(in[0].shape, t);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        if (onnx_) {
            const std::vector<float> zp = onnx_input_present(in, 2) ? values_as_floats(in[2]) : std::vector<float>();
            onnx_quantize(in[0], values_as_floats(in[1]), zp, onnx_axis_groups(in[0].shape(), in[1].shape(), axis_),
                          out[0], ctx);
            return;
        }
        const float* x = in[0].data<float>();
        int8_t* y = out[0].data<int8_t>();
        for_each_block(ncnn_row_groups(in[0].shape(), scale_.size()), in[0].numel(), ctx,
                       [&](int64_t c, int64_t begin, int64_t end) {
                           quantize_span(x + begin, y + begin, end - begin, scale_.at(c));
                       });
    }

    int64_t weight_bytes() const override { return scale_.bytes(); }

private:
    bool onnx_ = false;
    NcnnChannelValues scale_; // ncnn's form
    int axis_ = 1;            // ONNX's form
    DType out_dtype_ = DType::U8;
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
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const float* x = in[0].data<float>();
        float lo = 0.f, hi = 0.f; // the range always includes 0
        for (int64_t i = 0; i < in[0].numel(); ++i) {
            lo = std::min(lo, x[i]);
            hi = std::max(hi, x[i]);
        }
        const float scale = hi == lo ? 1.f : (hi - lo) / 255.f;
        const uint8_t zp = saturate_cast<uint8_t>(std::nearbyint(0.f - lo / scale));
        ChannelGroups whole;
        whole.inner = in[0].numel();
        onnx_quantize(in[0], {scale}, {static_cast<float>(zp)}, whole, out[0], ctx);
        if (out.size() > 1) out[1].data<float>()[0] = scale;
        if (out.size() > 2) out[2].data<uint8_t>()[0] = zp;
    }
};

} // namespace

std::unique_ptr<Op> make_quantize() { return std::make_unique<Quantize>(); }
std::unique_ptr<Op> make_dynamic_quantize_linear() { return std::make_unique<DynamicQuantizeLinear>(); }

} // namespace kestrel
