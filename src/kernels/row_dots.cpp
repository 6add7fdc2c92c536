#include "kernels/row_dots.h"

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(RowDotKernel, row_dot)

} // namespace kestrel
