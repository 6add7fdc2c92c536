// The depthwise kernels (planes, channel blocks) for AVX-512, 16-float vectors.
#include "kernels/depthwise_conv2d_blocks.h"
#include "kernels/depthwise_conv2d_rows.h"

namespace kestrel::detail {

const DepthwiseKernel& depthwise_kernel_avx512()
{
    static const DepthwiseKernel k{"avx512", depthwise_plane<VectorOf<16>>, 16, depthwise_block<VectorOf<16>>,
                                  max_block<VectorOf<16>>, whole_sums<VectorOf<16>>, whole_maxima<VectorOf<16>>,
                                  max_plane<VectorOf<16>>};
    return k;
}

} // namespace kestrel::detail
