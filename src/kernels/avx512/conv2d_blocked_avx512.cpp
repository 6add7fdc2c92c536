// The direct convolution on channel blocks for AVX-512, 16-float vectors.
#include "kernels/conv2d_blocked_impl.h"

namespace kestrel::detail {

const Conv2dBlockedKernel& conv2d_blocked_kernel_avx512()
{
    // The register tiles: 2 output blocks x 12 pixels, or x 2 rows of 7 (28 of
    // the 32 registers).
    static const Conv2dBlockedKernel k{"avx512", 16, conv2d_blocked<VectorOf<16>, 2, 12, 7>};
    return k;
}

} // namespace kestrel::detail
