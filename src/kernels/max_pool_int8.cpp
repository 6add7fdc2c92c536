#include "kernels/max_pool_int8.h"

#include "core/cpu_features.h"

namespace kestrel {

namespace detail {
const Int8MaxPoolKernel& int8_max_pool_kernel_generic(); // pool2d.cpp
const Int8MaxPoolKernel& int8_max_pool_kernel_avx512();
} // namespace detail

std::vector<const Int8MaxPoolKernel*> int8_max_pool_kernels_available(const Pool2dGeometry& g)
{
    std::vector<const Int8MaxPoolKernel*> kernels{&detail::int8_max_pool_kernel_generic()};
    if (cpu_has_avx512() && (g.stride_w == 1 || g.stride_w == 2) && g.kernel_h * g.kernel_w <= 16)
        kernels.push_back(&detail::int8_max_pool_kernel_avx512());
    return kernels;
}

const Int8MaxPoolKernel& int8_max_pool_kernel(const Pool2dGeometry& g)
{
    return *int8_max_pool_kernels_available(g).back();
}

} // namespace kestrel
