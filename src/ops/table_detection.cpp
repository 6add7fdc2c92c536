#include "ops/builtin_ops.h"

namespace kestrel {

std::vector<BuiltinOp> detection_ops()
{
    return {};
}

} // namespace kestrel
