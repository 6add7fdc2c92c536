// QDQ convolutions — DequantizeLinear(x), DequantizeLinear(w) [,
// DequantizeLinear(int32 bias)] -> Conv -> QuantizeLinear, as ONNX Runtime's
// quantizer writes them — rewritten as the QLinearConv ONNX Runtime runs them
// as, before conversion, so that they take the int8 kernels
// (convert_quantized.cpp). Only where the rewrite is that of ONNX Runtime:
// scalar activation scales and zero points, weights, scales and zero points
// as initializers, a weight scale per tensor or along axis 0, a bias of
// int32 values in units of x_scale * w_scale, and the Conv's output read by
// the QuantizeLinear alone.
#pragma once
#include "onnx/onnx_pb.h"

namespace kestrel::onnx_import {

// Returns how many convolutions it rewrote.
int fuse_qdq_convolutions(onnx::GraphProto& graph);

} // namespace kestrel::onnx_import
