// The portable bfloat16 GEMM tile: one fp32 sum per "vector", a word's two
// products added to it in plain C++ (what vdpbf16ps does per lane; its
// rounding of the pair's sum may differ in the last bit); 4 rows x 8 columns.
#include "core/half.h"
#include "kernels/bf16_gemm.h"
#include "kernels/dot_gemm_tile.h"

namespace kestrel::detail {

namespace {

struct ScalarBf16Dot {
    using vec = float;
    using operand = uint32_t;
    using A = uint16_t;
    using Sum = float;
    static constexpr int width = 1;
    static vec set1(float v) { return v; }
    static operand load(const uint8_t* p) { return static_cast<uint32_t>(quad_word(p)); }
    static operand broadcast4(const uint16_t* p) { return static_cast<uint32_t>(quad_word(p)); }
    static vec dot(vec acc, operand b, operand a)
    {
        const auto lo = [](uint32_t w) { return bf16_to_float(static_cast<uint16_t>(w)); };
        const auto hi = [](uint32_t w) { return bf16_to_float(static_cast<uint16_t>(w >> 16)); };
        return acc + (lo(b) * lo(a) + hi(b) * hi(a));
    }
    static void store(float* p, vec v) { *p = v; }
};

} // namespace

const Bf16GemmKernel& bf16_gemm_kernel_generic()
{
    static const Bf16GemmKernel k{"generic", 4, 8, 1, dot_gemm_tile<ScalarBf16Dot, 4, 8>};
    return k;
}

} // namespace kestrel::detail
