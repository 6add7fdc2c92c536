// The direct convolution on channel blocks for AVX2 + FMA, 8-float vectors.
#include "kernels/conv2d_blocked_impl.h"

namespace kestrel::detail {

const Conv2dBlockedKernel& conv2d_blocked_kernel_avx2()
{
    // The register tiles: 2 output blocks x 6 pixels, or x 2 rows of 3.
    static const Conv2dBlockedKernel k{"avx2", 8, conv2d_blocked<VectorOf<8>, 2, 6, 3>};
    return k;
}

} // namespace kestrel::detail
