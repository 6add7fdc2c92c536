// The loss family. Losses: NegativeLogLikelihoodLoss.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_nll_loss();

std::vector<BuiltinOp> loss_family()
{
    return {
        {"NegativeLogLikelihoodLoss", make_nll_loss},
    };
}

} // namespace kestrel
