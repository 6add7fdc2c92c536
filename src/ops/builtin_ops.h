// The table of built-in layer types. Each op file defines its make_* factory;
// the registry installs this table on first use.
#pragma once
#include <memory>
#include <vector>

#include "kestrel/op.h"

namespace kestrel {

struct BuiltinOp {
    const char* type;
    std::unique_ptr<Op> (*factory)();
};

const std::vector<BuiltinOp>& builtin_ops();

std::unique_ptr<Op> make_input();
std::unique_ptr<Op> make_split();
std::unique_ptr<Op> make_flatten();
std::unique_ptr<Op> make_noop();
std::unique_ptr<Op> make_reshape();
std::unique_ptr<Op> make_convolution();
std::unique_ptr<Op> make_convolution_depthwise();
std::unique_ptr<Op> make_pooling();
std::unique_ptr<Op> make_inner_product();
std::unique_ptr<Op> make_eltwise();
std::unique_ptr<Op> make_binary_op();
std::unique_ptr<Op> make_unary_op();
std::unique_ptr<Op> make_relu();
std::unique_ptr<Op> make_clip();
std::unique_ptr<Op> make_sigmoid();
std::unique_ptr<Op> make_swish();
std::unique_ptr<Op> make_hard_sigmoid();
std::unique_ptr<Op> make_hard_swish();
std::unique_ptr<Op> make_gelu();
std::unique_ptr<Op> make_mish();
std::unique_ptr<Op> make_tanh();
std::unique_ptr<Op> make_dropout();

} // namespace kestrel
