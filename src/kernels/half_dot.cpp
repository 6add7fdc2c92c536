#include "kernels/half_dot.h"

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(HalfDotKernel, half_dot)

} // namespace kestrel
