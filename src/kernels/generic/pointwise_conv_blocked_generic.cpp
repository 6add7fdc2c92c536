// The 1x1 convolution on channel blocks for 4-float vectors (SSE2 on x86-64, NEON on ARM).
#include "kernels/pointwise_conv_blocked_impl.h"

namespace kestrel::detail {

const PointwiseBlockedKernel& pointwise_blocked_kernel_generic()
{
    // The register tile: 6 pixels x 2 output blocks.
    static const PointwiseBlockedKernel k{"generic", 4, pointwise_blocked<VectorOf<4>, 2, 6>};
    return k;
}

} // namespace kestrel::detail
