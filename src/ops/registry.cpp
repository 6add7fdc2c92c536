#include "ops/registry.h"

namespace kestrel {

std::vector<BuiltinOp> builtin_ops()
{
    std::vector<BuiltinOp> all;
    for (auto family : {control_family, activation_family, elementwise_family, conv_family, pool_family, matmul_family, shape_family, generate_family, norm_family, reduce_family, attention_family, recurrent_family, detection_family, quant_family, resample_family, signal_family, loss_family, text_family, sequence_family, training_family}) {
        const std::vector<BuiltinOp> ops = family();
        all.insert(all.end(), ops.begin(), ops.end());
    }
    return all;
}

} // namespace kestrel
