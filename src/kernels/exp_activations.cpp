#include "kernels/exp_activations.h"

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(ExpActivationKernel, exp_activation)

} // namespace kestrel
