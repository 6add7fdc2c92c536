// The exp-based activations for AVX-512, 16-float vectors.
#include "kernels/exp_activations_map.h"

namespace kestrel::detail {

const ExpActivationKernel& exp_activation_kernel_avx512()
{
    static const ExpActivationKernel k{"avx512", map_exp_activation<VectorOf<16>>};
    return k;
}

} // namespace kestrel::detail
