// The pixel row loops for generic.
#include "kernels/pixel_rows_impl.h"

namespace kestrel::detail {

const PixelRowsKernel& pixel_rows_kernel_generic()
{
    static const PixelRowsKernel k = pixel_rows_kernel_of("generic");
    return k;
}

} // namespace kestrel::detail
