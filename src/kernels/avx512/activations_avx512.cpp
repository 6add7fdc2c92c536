// The activation kernels for AVX-512, 16-float vectors.
#include "kernels/activations_map.h"

namespace kestrel::detail {

const ActivationKernel& activation_kernel_avx512()
{
    static const ActivationKernel k{"avx512", map_exp_activation<VectorOf<16>>,
                                  map_piecewise_activation<VectorOf<16>>,
                                  lrn_across_channels<VectorOf<16>>};
    return k;
}

} // namespace kestrel::detail
