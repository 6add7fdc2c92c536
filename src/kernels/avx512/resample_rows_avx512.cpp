// The weighted row sums of a resize for avx512, 16-float vectors.
#include "kernels/resample_rows_impl.h"

namespace kestrel::detail {

const ResampleRowsKernel& resample_rows_kernel_avx512()
{
    static const ResampleRowsKernel k = resample_rows_kernel_of<VectorOf<16>>("avx512");
    return k;
}

} // namespace kestrel::detail
