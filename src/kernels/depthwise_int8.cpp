#include "kernels/depthwise_int8.h"

#include "core/cpu_features.h"

namespace kestrel {

namespace detail {
const DepthwiseInt8Kernel& depthwise_int8_kernel_avx512vnni();
} // namespace detail

const DepthwiseInt8Kernel* depthwise_int8_kernel(const Depthwise2dGeometry& g)
{
    if (!cpu_has_avx512_vnni() || g.kw > 4 || g.kh > 64 || g.stride_w > 4 ||
        3 * g.stride_w + (g.kw - 1) * g.dilation_w > 15)
        return nullptr;
    return &detail::depthwise_int8_kernel_avx512vnni();
}

} // namespace kestrel
