#include "kernels/resample_rows.h"

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(ResampleRowsKernel, resample_rows)

} // namespace kestrel
