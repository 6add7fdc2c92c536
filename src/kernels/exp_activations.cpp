#include "kernels/exp_activations.h"

#include "kernels/isa.h"

namespace kestrel {

namespace detail {
const ExpActivationKernel& exp_activation_kernel_generic();
const ExpActivationKernel& exp_activation_kernel_avx2();
const ExpActivationKernel& exp_activation_kernel_avx512();
} // namespace detail

std::vector<const ExpActivationKernel*> exp_activation_kernels_available()
{
    return kernels_available(IsaKernels<ExpActivationKernel>{detail::exp_activation_kernel_generic,
                                                             detail::exp_activation_kernel_avx2,
                                                             detail::exp_activation_kernel_avx512});
}

const ExpActivationKernel& exp_activation_kernel()
{
    static const ExpActivationKernel& best = *exp_activation_kernels_available().back();
    return best;
}

} // namespace kestrel
