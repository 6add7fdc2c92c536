#include "ops/builtin_ops.h"

namespace kestrel {

std::vector<BuiltinOp> builtin_ops()
{
    std::vector<BuiltinOp> all;
    for (auto family : {core_ops, conv_ops, elementwise_ops, data_ops, math_ops, detection_ops, nd_ops, norms_ops,
                        seqmisc_ops, losses_ops, convpool_ops}) {
        const std::vector<BuiltinOp> ops = family();
        all.insert(all.end(), ops.begin(), ops.end());
    }
    return all;
}

} // namespace kestrel
