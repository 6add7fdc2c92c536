// The elementwise family. Element-wise math on the one strided broadcast engine
// (kernels/broadcast.h): BinaryOp (ncnn's and numpy's broadcast rules), UnaryOp,
// N-input Eltwise, each with ncnn's float32 op table or the typed one
// (typed_ops.h, every dtype; what ONNX's element-wise ops become), Where, and Cast.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_eltwise();
std::unique_ptr<Op> make_binary_op();
std::unique_ptr<Op> make_unary_op();
std::unique_ptr<Op> make_where();
std::unique_ptr<Op> make_cast();

std::vector<BuiltinOp> elementwise_family()
{
    return {
        {"Eltwise", make_eltwise},
        {"BinaryOp", make_binary_op},
        {"UnaryOp", make_unary_op},
        {"Where", make_where},
        {"Cast", make_cast},
    };
}

} // namespace kestrel
