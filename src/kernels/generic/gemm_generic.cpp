// The portable GEMM tile: 4-float vectors (SSE2 on x86-64, NEON on ARM), 6 rows
// x 8 columns (2- and 4-row tiles for a last panel's rows). Built without -ffp-contract=fast: multiply and add stay separate
// on targets without FMA, so results differ in the last bits from the ISA kernels.
#include "kernels/gemm_tile.h"

namespace kestrel::detail {

const GemmKernel& gemm_kernel_generic()
{
    static const GemmKernel k{"generic", 6, 8, gemm_tile<VectorOf<4>, 6, 2>, gemm_tile<VectorOf<4>, 6, 1>,
                              gemm_tile_narrow<VectorOf<4>, 6>,
                              {{2, gemm_tile<VectorOf<4>, 2, 2, 6>, gemm_tile<VectorOf<4>, 2, 1, 6>},
                               {4, gemm_tile<VectorOf<4>, 4, 2, 6>, gemm_tile<VectorOf<4>, 4, 1, 6>}}};
    return k;
}

} // namespace kestrel::detail
