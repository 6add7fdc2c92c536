// The pixel row loops for avx2.
#include "kernels/pixel_rows_impl.h"

namespace kestrel::detail {

const PixelRowsKernel& pixel_rows_kernel_avx2()
{
    static const PixelRowsKernel k = pixel_rows_kernel_of("avx2");
    return k;
}

} // namespace kestrel::detail
