#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_binary_op();
std::unique_ptr<Op> make_unary_op();

std::vector<BuiltinOp> elementwise_ops()
{
    return {
        {"BinaryOp", make_binary_op},
        {"UnaryOp", make_unary_op},
    };
}

} // namespace kestrel
