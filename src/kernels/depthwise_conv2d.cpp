#include "kernels/depthwise_conv2d.h"

#include <algorithm>

#include "kernels/isa.h"

namespace kestrel {

namespace detail {
const DepthwiseKernel& depthwise_kernel_generic();
const DepthwiseKernel& depthwise_kernel_avx2();
const DepthwiseKernel& depthwise_kernel_avx512();
} // namespace detail

std::vector<const DepthwiseKernel*> depthwise_kernels_available()
{
    return kernels_available(
        IsaKernels<DepthwiseKernel>{detail::depthwise_kernel_generic, detail::depthwise_kernel_avx2, detail::depthwise_kernel_avx512});
}

const DepthwiseKernel& depthwise_kernel()
{
    static const DepthwiseKernel& best = *depthwise_kernels_available().back();
    return best;
}

int64_t Depthwise2dGeometry::scratch_floats() const
{
    const int64_t pw = padded_w(), ph = padded_h();
    // Rows: the cached padded rows and one line at stride 1. Narrow planes:
    // the whole padded plane and its convolution as one long line.
    return std::max(cached_rows() * pw + pw, 2 * ph * pw);
}

} // namespace kestrel
