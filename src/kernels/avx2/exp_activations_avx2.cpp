// The exp-based activations for AVX2 + FMA, 8-float vectors.
#include "kernels/exp_activations_map.h"

namespace kestrel::detail {

const ExpActivationKernel& exp_activation_kernel_avx2()
{
    static const ExpActivationKernel k{"avx2", map_exp_activation<VectorOf<8>>};
    return k;
}

} // namespace kestrel::detail
