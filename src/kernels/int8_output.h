// The last stage of an int8 layer, and the quantization of its input, one
// kernel per ISA (int8_output_impl.h): int32 sums to floats (dequantized, a
// bias, ReLU/Clip as a clamp) and floats to int8 with ncnn's rounding, so an
// int8 convolution's output never passes through a float buffer when it is
// requantized. Every value takes the same vector code (a tail goes through a
// padded vector), with the bits of the scalar forms (ops/quant/int8.h).
#pragma once
#include <cstdint>
#include <vector>

namespace kestrel {

struct Int8OutputKernel {
    const char* isa;
    // y[i] = min(max(float(sums[i]) * scale + *bias + residual[i], clamp[0]), clamp[1]):
    // the product rounded before the adds, taken in that order; no add
    // without `bias` or `residual` (a layer's residual input, param 20), no
    // clamp without `clamp`.
    void (*dequantize)(const int32_t* sums, int64_t n, float scale, const float* bias, const float* residual,
                       const float* clamp, float* y);
    // The same from sums held exactly as floats (the int8 paths on float kernels).
    void (*dequantize_floats)(const float* sums, int64_t n, float scale, const float* bias, const float* residual,
                              const float* clamp, float* y);
    // q[i] = float2int8(x[i] * scale): half away from zero, clamped to
    // [-127, 127], NaN to 0.
    void (*quantize)(const float* x, int64_t n, float scale, int8_t* q);
    // q[i] = float2int8(y * out_scale), y as dequantize gives it.
    void (*requantize)(const int32_t* sums, int64_t n, float scale, const float* bias, const float* clamp,
                       float out_scale, int8_t* q);
    void (*requantize_floats)(const float* sums, int64_t n, float scale, const float* bias, const float* clamp,
                              float out_scale, int8_t* q);
    // The dot-product kernels' input words: words[i] holds the four
    // channels' bytes at i (src[0]'s in the lowest byte), XOR flip: int8
    // values offset by 128 (flip 0x80808080) as the unsigned operand of
    // vpdpbusd and tdpbsud, or uint8 ones as they are (flip 0); or from floats
    // quantized as `quantize` does, offset by 128.
    void (*offset_quads)(const int8_t* const* src, int64_t n, uint32_t flip, uint32_t* words);
    void (*quantize_offset_quads)(const float* const* src, int64_t n, float scale, uint32_t* words);
    // ONNX's requantization of integer sums (QLinearConv, QLinearMatMul):
    // q[i] = min(max(round_half_even(float(sums[i] + offset) * scale) + zero_point, lo), hi)
    // as a byte ([lo, hi] = [0, 255] for uint8, [-128, 127] for int8), the
    // offset added in int32 (wrapping, as the accumulation).
    void (*requantize_even)(const int32_t* sums, int64_t n, int32_t offset, float scale, int32_t zero_point,
                            int32_t lo, int32_t hi, uint8_t* q);
    // The same from sums held exactly as floats (the int8 paths on float kernels).
    void (*requantize_even_floats)(const float* sums, int64_t n, int32_t offset, float scale, int32_t zero_point,
                                   int32_t lo, int32_t hi, uint8_t* q);
    // The same with an offset and a scale per value (a row of a quantized
    // matrix product: one per output column).
    void (*requantize_even_columns)(const int32_t* sums, int64_t n, const int32_t* offsets, const float* scales,
                                    int32_t zero_point, int32_t lo, int32_t hi, uint8_t* q);
    // ONNX's QuantizeLinear of floats to bytes: q[i] = min(max(round_half_even(x[i] / scale) +
    // zero_point, lo), hi) (a division, as ONNX Runtime), NaN to 0.
    void (*quantize_even)(const float* x, int64_t n, float scale, int32_t zero_point, int32_t lo, int32_t hi,
                          uint8_t* q);
    // ONNX's DequantizeLinear of uint8 (or, is_signed, int8) bytes: y[i] = float(q[i] - zero_point) * scale.
    void (*dequantize_bytes)(const uint8_t* q, int64_t n, bool is_signed, int32_t zero_point, float scale, float* y);
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const Int8OutputKernel& int8_output_kernel();
std::vector<const Int8OutputKernel*> int8_output_kernels_available();

} // namespace kestrel
