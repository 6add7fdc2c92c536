// The 1x1 convolution on channel blocks for AVX-512, 16-float vectors.
#include "kernels/pointwise_conv_blocked_impl.h"

namespace kestrel::detail {

const PointwiseBlockedKernel& pointwise_blocked_kernel_avx512()
{
    // The register tile: 12 pixels x 2 output blocks.
    static const PointwiseBlockedKernel k{"avx512", 16, pointwise_blocked<VectorOf<16>, 2, 12>};
    return k;
}

} // namespace kestrel::detail
