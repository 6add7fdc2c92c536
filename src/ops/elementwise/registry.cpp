// The elementwise family. Element-wise math on the one strided broadcast engine
// (kernels/broadcast.h): binary ops with ncnn's and numpy's broadcast rules,
// unary math, N-input Eltwise/Sum/Mean/Max/Min, Where, and Cast.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_eltwise();
std::unique_ptr<Op> make_binary_op();
std::unique_ptr<Op> make_unary_op();
std::unique_ptr<Op> make_nd_elementwise();
std::unique_ptr<Op> make_nd_unary();
std::unique_ptr<Op> make_nd_where();
std::unique_ptr<Op> make_nd_sum();
std::unique_ptr<Op> make_nd_mean();
std::unique_ptr<Op> make_nd_max();
std::unique_ptr<Op> make_nd_min();
std::unique_ptr<Op> make_cast();

std::vector<BuiltinOp> elementwise_family()
{
    return {
        {"Eltwise", make_eltwise},
        {"BinaryOp", make_binary_op},
        {"UnaryOp", make_unary_op},
        {"Elementwise", make_nd_elementwise},
        {"Unary", make_nd_unary},
        {"Where", make_nd_where},
        {"Sum", make_nd_sum},
        {"Mean", make_nd_mean},
        {"Max", make_nd_max},
        {"Min", make_nd_min},
        {"Cast", make_cast},
    };
}

} // namespace kestrel
