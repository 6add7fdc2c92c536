#include "kernels/activations.h"

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(ActivationKernel, activation)

} // namespace kestrel
