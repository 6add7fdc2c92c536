#include "ops/builtin_ops.h"

namespace kestrel {

std::vector<BuiltinOp> data_ops()
{
    return {};
}

} // namespace kestrel
