// The exp-based activations for 4-float vectors (SSE2 on x86-64, NEON on ARM).
#include "kernels/exp_activations_map.h"

namespace kestrel::detail {

const ExpActivationKernel& exp_activation_kernel_generic()
{
    static const ExpActivationKernel k{"generic", map_exp_activation<VectorOf<4>>};
    return k;
}

} // namespace kestrel::detail
