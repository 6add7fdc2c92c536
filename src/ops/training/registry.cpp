// The training family: OptimizerStep (Adagrad, Momentum, Adam updates).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_optimizer_step();

std::vector<BuiltinOp> training_family()
{
    return {
        {"OptimizerStep", make_optimizer_step},
    };
}

} // namespace kestrel
