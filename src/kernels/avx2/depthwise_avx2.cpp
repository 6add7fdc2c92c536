// The depthwise kernels (planes, channel blocks) for AVX2 + FMA, 8-float vectors.
#include "kernels/depthwise_conv2d_blocks.h"
#include "kernels/depthwise_conv2d_rows.h"

namespace kestrel::detail {

const DepthwiseKernel& depthwise_kernel_avx2()
{
    static const DepthwiseKernel k{"avx2", depthwise_plane<VectorOf<8>>, 8, depthwise_block<VectorOf<8>>,
                                  max_block<VectorOf<8>>, whole_sums<VectorOf<8>>, whole_maxima<VectorOf<8>>,
                                  max_plane<VectorOf<8>>};
    return k;
}

} // namespace kestrel::detail
