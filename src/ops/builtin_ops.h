// The built-in layer types, as one table per op family (each family's table
// lives in src/ops/table_<family>.cpp beside its ops). The registry installs
// all of them on first use; no static initializers are involved.
#pragma once
#include <memory>
#include <vector>

#include "kestrel/op.h"

namespace kestrel {

struct BuiltinOp {
    const char* type;
    std::unique_ptr<Op> (*factory)();
};

std::vector<BuiltinOp> core_ops();         // graph plumbing (If included), activations, Eltwise
std::vector<BuiltinOp> conv_ops();         // convolution, pooling, inner product, int8
std::vector<BuiltinOp> elementwise_ops();  // BinaryOp, UnaryOp
std::vector<BuiltinOp> data_ops();         // concat, slice, crop, permute, padding, ...
std::vector<BuiltinOp> math_ops();         // softmax, norms, reductions, gemm, attention, interp
std::vector<BuiltinOp> detection_ops();    // priors, detection outputs
std::vector<BuiltinOp> nd_ops();           // ONNX-semantics tensor layers (Gather, SliceND, Pad, ...)
std::vector<BuiltinOp> norms_ops();        // NormalizeND, ReduceND (ONNX normalizations and reductions)
std::vector<BuiltinOp> seqmisc_ops();      // recurrent nets, NMS, quantization, Einsum, GridSample, RoiAlign
std::vector<BuiltinOp> losses_ops();       // ONNX LogSoftmax, Hardmax, losses, DropoutND, windows, Det, ...
std::vector<BuiltinOp> convpool_ops();     // 1-D/3-D convolution, ONNX pools of any rank

std::vector<BuiltinOp> builtin_ops();

} // namespace kestrel
