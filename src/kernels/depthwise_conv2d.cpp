#include "kernels/depthwise_conv2d.h"

#include <algorithm>

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(DepthwiseKernel, depthwise)

int64_t channel_block() { return depthwise_kernel().block; }

int64_t Depthwise2dGeometry::scratch_floats() const
{
    const int64_t pw = padded_w(), ph = padded_h();
    // Rows: the cached padded rows and one line at stride 1. Narrow planes:
    // the whole padded plane and its convolution as one long line.
    return std::max(cached_rows() * pw + pw, 2 * ph * pw);
}

} // namespace kestrel
