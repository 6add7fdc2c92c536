// The activation kernels for AVX2 + FMA, 8-float vectors.
#include "kernels/activations_map.h"

namespace kestrel::detail {

const ActivationKernel& activation_kernel_avx2()
{
    static const ActivationKernel k{"avx2", map_exp_activation<VectorOf<8>>,
                                  map_piecewise_activation<VectorOf<8>>,
                                  lrn_across_channels<VectorOf<8>>};
    return k;
}

} // namespace kestrel::detail
