// The pixel row loops for avx512.
#include "kernels/pixel_rows_impl.h"

namespace kestrel::detail {

const PixelRowsKernel& pixel_rows_kernel_avx512()
{
    static const PixelRowsKernel k = pixel_rows_kernel_of("avx512");
    return k;
}

} // namespace kestrel::detail
