// The AVX2 + FMA GEMM tile: 6 rows x 16 columns (12 of the 16 ymm registers
// accumulate); 2- and 4-row tiles for a last panel's rows.
#include "kernels/gemm_tile.h"

namespace kestrel::detail {

const GemmKernel& gemm_kernel_avx2()
{
    static const GemmKernel k{"avx2", 6, 16, gemm_tile<VectorOf<8>, 6, 2>, gemm_tile<VectorOf<8>, 6, 1>,
                              gemm_tile_narrow<VectorOf<8>, 6>,
                              {{2, gemm_tile<VectorOf<8>, 2, 2, 6>, gemm_tile<VectorOf<8>, 2, 1, 6>},
                               {4, gemm_tile<VectorOf<8>, 4, 2, 6>, gemm_tile<VectorOf<8>, 4, 1, 6>}}};
    return k;
}

} // namespace kestrel::detail
