// The broadcast engine's float rows for 16-float vectors.
#include "kernels/broadcast_rows.h"

namespace kestrel::detail {

const BroadcastRowKernel& broadcast_row_kernel_avx512()
{
    static const BroadcastRowKernel k = broadcast_rows_for<VectorOf<16>>("avx512");
    return k;
}

} // namespace kestrel::detail
