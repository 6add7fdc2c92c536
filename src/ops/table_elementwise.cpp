#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_binary_op();
std::unique_ptr<Op> make_unary_op();
// src/ops/nd_elementwise.cpp: ONNX element-wise layers over every dtype.
std::unique_ptr<Op> make_nd_elementwise();
std::unique_ptr<Op> make_nd_unary();
std::unique_ptr<Op> make_nd_where();
std::unique_ptr<Op> make_nd_sum();
std::unique_ptr<Op> make_nd_mean();
std::unique_ptr<Op> make_nd_max();
std::unique_ptr<Op> make_nd_min();

std::vector<BuiltinOp> elementwise_ops()
{
    return {
        {"BinaryOp", make_binary_op},
        {"UnaryOp", make_unary_op},
        {"Elementwise", make_nd_elementwise},
        {"Unary", make_nd_unary},
        {"Where", make_nd_where},
        {"Sum", make_nd_sum},
        {"Mean", make_nd_mean},
        {"Max", make_nd_max},
        {"Min", make_nd_min},
    };
}

} // namespace kestrel
