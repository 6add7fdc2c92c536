// The direct convolution on channel blocks for 4-float vectors (SSE2 on x86-64, NEON on ARM).
#include "kernels/conv2d_blocked_impl.h"

namespace kestrel::detail {

const Conv2dBlockedKernel& conv2d_blocked_kernel_generic()
{
    // The register tiles: 2 output blocks x 6 pixels, or x 2 rows of 3.
    static const Conv2dBlockedKernel k{"generic", 4, conv2d_blocked<VectorOf<4>, 2, 6, 3>};
    return k;
}

} // namespace kestrel::detail
