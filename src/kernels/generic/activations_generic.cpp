// The activation kernels for 4-float vectors (SSE2 on x86-64, NEON on ARM).
#include "kernels/activations_map.h"

namespace kestrel::detail {

const ActivationKernel& activation_kernel_generic()
{
    static const ActivationKernel k{"generic", map_exp_activation<VectorOf<4>>,
                                  map_piecewise_activation<VectorOf<4>>,
                                  lrn_across_channels<VectorOf<4>>};
    return k;
}

} // namespace kestrel::detail
