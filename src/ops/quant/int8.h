// Int8 helpers shared by the int8-aware ops (Convolution, ConvolutionDepthWise,
// InnerProduct, Quantize, Requantize) and the small desc helper they all use.
//
// ncnn's conventions (src/layer/convolution.cpp, quantize.cpp, requantize.cpp):
//   q = float2int8(x * scale): round half away from zero (C round()), then
//       clamp to [-127, 127] (-128 is never produced);
//   dequantize an int32 sum by 1 / (in_scale * w_scale), where a zero weight
//   scale gives 0. We extend that to any zero or non-finite factor so that
//   zero-filled benchmark models never produce inf/NaN.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "kestrel/op.h"

namespace kestrel {

// ncnn's float2int8: round half away from zero, clamp to [-127, 127].
// NaN (undefined in ncnn) maps to 0 here. Clamping before rounding gives the
// same result (the bounds are integers) and keeps the int conversion in range;
// without branches or a call to round(), loops over it vectorize.
inline int8_t float2int8(float v)
{
    const float clamped = v > 127.f ? 127.f : (v < -127.f ? -127.f : v);
    const float c = clamped == clamped ? clamped : 0.f;
    const int t = static_cast<int>(c); // toward zero
    const float frac = c - static_cast<float>(t);
    return static_cast<int8_t>(t + (frac >= 0.5f) - (frac <= -0.5f));
}

inline void quantize_span(const float* src, int8_t* dst, int64_t n, float scale)
{
    for (int64_t i = 0; i < n; ++i) dst[i] = float2int8(src[i] * scale);
}

// Sum of a[i] * b[i] in int32 as ncnn accumulates it, wrapping (never a
// signed overflow) on the absurd depths a malformed model may declare.
inline int32_t int8_dot(const int8_t* a, const int8_t* b, int64_t n)
{
    uint32_t sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += static_cast<uint32_t>(int32_t{a[i]} * int32_t{b[i]});
    return static_cast<int32_t>(sum);
}

// The factor that turns an int32 accumulator into float: 1/(in_scale*w_scale),
// or 0 when either scale is zero (or the product under/overflows).
inline float dequant_factor(float in_scale, float w_scale)
{
    if (w_scale == 0.f || in_scale == 0.f) return 0.f;
    const float f = 1.f / (in_scale * w_scale);
    return std::isfinite(f) ? f : 0.f;
}

// A float pad value written into an int8 buffer, as ncnn's Padding does
// (static_cast<signed char>, i.e. truncation), clamped so it is never UB.
inline int8_t int8_pad_value(float v)
{
    if (v != v) return 0;
    const float t = std::trunc(v);
    if (t > 127.f) return 127;
    if (t < -128.f) return -128;
    return static_cast<int8_t>(static_cast<int>(t));
}

// The scales an int8 layer reads after its weights (ncnn's order, raw fp32):
// `weight_count` weight scales, the bottom (input) scale and, for layers with
// a requantized output, the top scale.
struct Int8Scales {
    std::vector<float> weight;
    float bottom = 0.f, top = 0.f;

    static Int8Scales load(WeightReader& wr, int64_t weight_count, bool top)
    {
        Int8Scales s;
        const Tensor ws = wr.load(weight_count, WeightEncoding::Raw);
        s.weight.assign(ws.data<float>(), ws.data<float>() + weight_count);
        s.bottom = wr.load(1, WeightEncoding::Raw).data<float>()[0];
        if (top) s.top = wr.load(1, WeightEncoding::Raw).data<float>()[0];
        return s;
    }

    // Per output (of `outputs`, in equal runs per weight scale: one scale,
    // one per group, or one per output): the factor of its int32 sums,
    // 1 / (bottom scale * weight scale).
    std::vector<float> dequant_factors(int64_t outputs) const
    {
        const int64_t n = static_cast<int64_t>(weight.size());
        std::vector<float> f(static_cast<size_t>(outputs));
        for (int64_t o = 0; o < outputs; ++o)
            f[static_cast<size_t>(o)] = dequant_factor(bottom, weight[static_cast<size_t>(o * n / outputs)]);
        return f;
    }
};

// The weights as int8: int8 ones as they are, float ones quantized at load in
// equal chunks, chunk i with scale i (an output channel, a group, or all).
inline Tensor int8_weights(const Tensor& weight, const std::vector<float>& scales)
{
    check(weight.dtype() == DType::F32 || weight.dtype() == DType::I8, "weights must be float32 or int8");
    if (weight.dtype() == DType::I8) return weight;
    Tensor q(weight.shape(), DType::I8);
    const int64_t chunk = weight.numel() / static_cast<int64_t>(scales.size());
    for (size_t i = 0; i < scales.size(); ++i)
        quantize_span(weight.data<float>() + i * chunk, q.data<int8_t>() + i * chunk, chunk, scales[i]);
    return q;
}

// TensorDesc without aggregate init (keeps -Wmissing-field-initializers quiet).
inline TensorDesc make_desc(Shape shape, DType dtype)
{
    TensorDesc d;
    d.shape = std::move(shape);
    d.dtype = dtype;
    return d;
}

} // namespace kestrel
