#include "ops/builtin_ops.h"

namespace kestrel {

std::vector<BuiltinOp> math_ops()
{
    return {};
}

} // namespace kestrel
