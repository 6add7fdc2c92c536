// The AVX-512 GEMM tile: 12 rows x 32 columns (24 of the 32 zmm registers
// accumulate); 4- and 8-row tiles for a last panel's rows.
#include "kernels/gemm_tile.h"

namespace kestrel::detail {

const GemmKernel& gemm_kernel_avx512()
{
    static const GemmKernel k{"avx512", 12, 32, gemm_tile<VectorOf<16>, 12, 2>, gemm_tile<VectorOf<16>, 12, 1>,
                              gemm_tile_narrow<VectorOf<16>, 12>,
                              {{4, gemm_tile<VectorOf<16>, 4, 2, 12>, gemm_tile<VectorOf<16>, 4, 1, 12>},
                               {8, gemm_tile<VectorOf<16>, 8, 2, 12>, gemm_tile<VectorOf<16>, 8, 1, 12>}}};
    return k;
}

} // namespace kestrel::detail
