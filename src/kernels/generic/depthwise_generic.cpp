// The depthwise kernels (planes, channel blocks) for 4-float vectors (SSE2 on x86-64, NEON on ARM).
#include "kernels/depthwise_conv2d_blocks.h"
#include "kernels/depthwise_conv2d_rows.h"

namespace kestrel::detail {

const DepthwiseKernel& depthwise_kernel_generic()
{
    static const DepthwiseKernel k{"generic", depthwise_plane<VectorOf<4>>, 4, depthwise_block<VectorOf<4>>,
                                  max_block<VectorOf<4>>, whole_sums<VectorOf<4>>, whole_maxima<VectorOf<4>>,
                                  max_plane<VectorOf<4>>};
    return k;
}

} // namespace kestrel::detail
