// ONNX's quantized form of our int8 layers (Kestrel's params 25-30 of
// Convolution and InnerProduct), for QLinearConv / QLinearMatMul and
// ConvInteger / MatMulInteger with constant symmetric int8 weights:
//   25 = 1   the form is on (with 8 = 2: one weight scale per output)
//   26       the input's zero point
//   27       the input type: 0 int8, 1 uint8
//   28       the output's zero point
//   29       the output type: 0 int8, 1 uint8, 2 int32 (the sums as they are)
//   30 = 1   an int32 bias follows the scales in the weights
// Weights after the int8 weights: the w_scales (one per output), x_scale,
// y_scale, [the int32 bias]. Output value o of a row:
//   round_half_even(float(sum + bias[o] - x_zero * rowsum(W[o])) * (x_scale * w_scale[o] / y_scale)) + y_zero,
// saturated to the output type: ONNX Runtime's arithmetic (the factor in
// float32, as it computes it). A uint8 value u is read as the int8 value
// u - 128 and its zero point likewise, so every int8 kernel serves it; the
// bias and the zero point's share make one integer offset per output.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/op.h"
#include "ops/quant/int8.h"

namespace kestrel {

struct OnnxQuantizedForm {
    bool on = false, x_uint8 = false, y_uint8 = false, y_int32 = false, bias = false;
    int x_zero = 0; // as the int8 value the input is read as
    int y_zero = 0;
    std::vector<float> scale;    // per output: x_scale * w_scale / y_scale (float32)
    std::vector<int32_t> offset; // per output: bias - x_zero * weight row sum (wrapping, as the sums)

    // Params 25-30.
    void load_param(const ParamDict& pd);
    DType input_dtype() const { return x_uint8 ? DType::U8 : DType::I8; }
    DType output_dtype() const { return y_int32 ? DType::I32 : y_uint8 ? DType::U8 : DType::I8; }
    int32_t lowest() const { return y_uint8 ? 0 : -128; }
    int32_t highest() const { return y_uint8 ? 255 : 127; }
    // After Int8Scales::load(wr, outputs, true): reads the bias (when 30 = 1)
    // and sets scale and offset from the int8 weights (`outputs` rows of `per`).
    void load_requantization(WeightReader& wr, const Int8Scales& scales, const int8_t* weights, int64_t outputs,
                             int64_t per);
};

} // namespace kestrel
