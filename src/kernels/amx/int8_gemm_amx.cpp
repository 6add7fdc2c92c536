// The AMX-INT8 GEMM tile (amx_tile.h with tdpbsud: A's signed weights times
// B's unsigned, offset activations); its row dot products are AVX512-VNNI's
// (every CPU with AMX has it).
#include "kernels/amx/amx_tile.h"
#include "kernels/int8_gemm.h"

namespace kestrel::detail {

const Int8GemmKernel& int8_gemm_kernel_avx512vnni();

namespace {
struct Int8Products {
    using A = int8_t;
    using Sum = int32_t;
    KESTREL_AMX_PRODUCTS(_tile_dpbsud)
};
} // namespace

const Int8GemmKernel& int8_gemm_kernel_amx()
{
    static const Int8GemmKernel k{"amx", 32, 32, 16, amx_tile<Int8Products>, int8_gemm_kernel_avx512vnni().row_dots};
    return k;
}

} // namespace kestrel::detail
