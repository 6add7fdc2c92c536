#include "kernels/int8_output.h"

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(Int8OutputKernel, int8_output)

} // namespace kestrel
