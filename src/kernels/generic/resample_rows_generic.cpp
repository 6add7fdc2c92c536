// The weighted row sums of a resize for generic, 4-float vectors.
#include "kernels/resample_rows_impl.h"

namespace kestrel::detail {

const ResampleRowsKernel& resample_rows_kernel_generic()
{
    static const ResampleRowsKernel k = resample_rows_kernel_of<VectorOf<4>>("generic");
    return k;
}

} // namespace kestrel::detail
