// The built-in layer types, one table per op family, each in its folder's
// registry.cpp beside the family's ops. The op registry
// (src/runtime/op_registry.cpp) installs all of them on first use; no static
// initializers are involved.
#pragma once
#include <memory>
#include <vector>

#include "graph/layer_traits.h"
#include "kestrel/op.h"

namespace kestrel {

struct BuiltinOp {
    const char* type;
    std::unique_ptr<Op> (*factory)();
    LayerTraits traits = {}; // what the optimizer may fuse around it
};

std::vector<BuiltinOp> control_family();
std::vector<BuiltinOp> activation_family();
std::vector<BuiltinOp> elementwise_family();
std::vector<BuiltinOp> conv_family();
std::vector<BuiltinOp> pool_family();
std::vector<BuiltinOp> matmul_family();
std::vector<BuiltinOp> shape_family();
std::vector<BuiltinOp> generate_family();
std::vector<BuiltinOp> norm_family();
std::vector<BuiltinOp> reduce_family();
std::vector<BuiltinOp> attention_family();
std::vector<BuiltinOp> recurrent_family();
std::vector<BuiltinOp> detection_family();
std::vector<BuiltinOp> quant_family();
std::vector<BuiltinOp> resample_family();
std::vector<BuiltinOp> signal_family();
std::vector<BuiltinOp> loss_family();
std::vector<BuiltinOp> text_family();
std::vector<BuiltinOp> sequence_family();
std::vector<BuiltinOp> training_family();

// Every family's table.
std::vector<BuiltinOp> builtin_ops();

} // namespace kestrel
