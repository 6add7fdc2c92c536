// The broadcast engine's float rows for 8-float vectors.
#include "kernels/broadcast_rows.h"

namespace kestrel::detail {

const BroadcastRowKernel& broadcast_row_kernel_avx2()
{
    static const BroadcastRowKernel k = broadcast_rows_for<VectorOf<8>>("avx2");
    return k;
}

} // namespace kestrel::detail
