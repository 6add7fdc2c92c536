// The portable int8 GEMM tile: one int32 per "vector", its 4 bytes' products
// summed in plain C++ (what vpdpbusd does per lane); 4 rows x 8 columns.
#include "kernels/dot_gemm_tile.h"

namespace kestrel::detail {

namespace {

struct ScalarDot {
    using vec = int32_t;
    using operand = vec;
    using A = int8_t;
    using Sum = int32_t;
    static constexpr int width = 1;
    static vec set1(int32_t v) { return v; }
    static vec load(const uint8_t* p) { return quad_word(p); }
    static vec broadcast4(const int8_t* p) { return quad_word(p); }
    static vec dot(vec acc, vec u, vec s)
    {
        uint8_t ub[4];
        int8_t sb[4];
        std::memcpy(ub, &u, 4);
        std::memcpy(sb, &s, 4);
        const int32_t products = ub[0] * sb[0] + ub[1] * sb[1] + ub[2] * sb[2] + ub[3] * sb[3];
        // Wrapping as vpdpbusd does (no signed overflow).
        return static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(products));
    }
    static void store(int32_t* p, vec v) { *p = v; }
    static int32_t sum(vec v) { return v; }
};

} // namespace

const Int8GemmKernel& int8_gemm_kernel_generic()
{
    static const Int8GemmKernel k{"generic", 4, 8, 1, dot_gemm_tile<ScalarDot, 4, 8>, int8_row_dots<ScalarDot>};
    return k;
}

} // namespace kestrel::detail
