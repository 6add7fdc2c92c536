#include "kernels/pixel_rows.h"

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(PixelRowsKernel, pixel_rows)

} // namespace kestrel
