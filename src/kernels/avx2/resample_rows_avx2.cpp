// The weighted row sums of a resize for avx2, 8-float vectors.
#include "kernels/resample_rows_impl.h"

namespace kestrel::detail {

const ResampleRowsKernel& resample_rows_kernel_avx2()
{
    static const ResampleRowsKernel k = resample_rows_kernel_of<VectorOf<8>>("avx2");
    return k;
}

} // namespace kestrel::detail
