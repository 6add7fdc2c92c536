// The AMX-BF16 GEMM tile (amx_tile.h with tdpbf16ps).
#include "kernels/amx/amx_tile.h"
#include "kernels/bf16_gemm.h"

namespace kestrel::detail {

namespace {
struct Bf16Products {
    using A = uint16_t;
    using Sum = float;
    KESTREL_AMX_PRODUCTS(_tile_dpbf16ps)
};
} // namespace

const Bf16GemmKernel& bf16_gemm_kernel_amx()
{
    static const Bf16GemmKernel k{"amx", 32, 32, 16, amx_tile<Bf16Products>};
    return k;
}

} // namespace kestrel::detail
