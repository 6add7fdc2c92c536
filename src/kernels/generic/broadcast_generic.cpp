// The broadcast engine's float rows for 4-float vectors (SSE2 on x86-64, NEON on ARM).
#include "kernels/broadcast_rows.h"

namespace kestrel::detail {

const BroadcastRowKernel& broadcast_row_kernel_generic()
{
    static const BroadcastRowKernel k = broadcast_rows_for<VectorOf<4>>("generic");
    return k;
}

} // namespace kestrel::detail
