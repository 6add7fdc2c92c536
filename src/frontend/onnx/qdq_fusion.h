// QDQ operators — DequantizeLinear(x), DequantizeLinear(w) [,
// DequantizeLinear(int32 bias)] -> Conv / MatMul / Gemm -> QuantizeLinear,
// as ONNX Runtime's quantizer writes them — rewritten as the quantized ops
// ONNX Runtime runs them as (QLinearConv, QLinearMatMul, its QGemm), before
// conversion, so that they take the int8 kernels (convert_quantized.cpp). Only where the rewrite is that of ONNX Runtime:
// scalar activation scales and zero points, weights, scales and zero points
// as initializers (2-D ones for MatMul / Gemm), a weight scale per tensor
// or per output channel, a bias of int32 values in units of x_scale *
// w_scale, and the op's output read by the QuantizeLinear alone; Gemm
// without transA, and with beta 1 when it has a bias.
#pragma once
#include "onnx/onnx_pb.h"

namespace kestrel::onnx_import {

// Returns how many operators it rewrote.
int fuse_qdq_nodes(onnx::GraphProto& graph);

} // namespace kestrel::onnx_import
