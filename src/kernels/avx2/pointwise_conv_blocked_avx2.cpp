// The 1x1 convolution on channel blocks for AVX2 + FMA, 8-float vectors.
#include "kernels/pointwise_conv_blocked_impl.h"

namespace kestrel::detail {

const PointwiseBlockedKernel& pointwise_blocked_kernel_avx2()
{
    // The register tile: 6 pixels x 2 output blocks.
    static const PointwiseBlockedKernel k{"avx2", 8, pointwise_blocked<VectorOf<8>, 2, 6>};
    return k;
}

} // namespace kestrel::detail
