// The AVX512-VNNI int8 GEMM tile: vpdpbusd, 16 int32 lanes of 4 byte products
// each; 4 rows x 64 columns (16 accumulators, 4 B vectors, 4 broadcasts). The
// float tile's 12 x 32 shape ran at half the speed here (BM_Int8GemmConv, one
// thread: 12x2 vectors 175 GOPS, 7x3 286, 5x4 277, 4x5 176, 4x4 358).
#include <immintrin.h>

#include "kernels/dot_gemm_tile.h"

namespace kestrel::detail {

namespace {

struct Vnni512Dot {
    using vec = __m512i;
    using operand = vec;
    using A = int8_t;
    using Sum = int32_t;
    static constexpr int width = 16;
    static vec set1(int32_t v) { return _mm512_set1_epi32(v); }
    static vec load(const uint8_t* p) { return _mm512_loadu_si512(p); }
    static vec broadcast4(const int8_t* p) { return _mm512_set1_epi32(quad_word(p)); }
    static vec dot(vec acc, vec u, vec s) { return _mm512_dpbusd_epi32(acc, u, s); }
    static void store(int32_t* p, vec v) { _mm512_storeu_si512(p, v); }
    static int32_t sum(vec v) { return _mm512_reduce_add_epi32(v); }
};

} // namespace

const Int8GemmKernel& int8_gemm_kernel_avx512vnni()
{
    static const Int8GemmKernel k{"avx512vnni", 4, 64, 1, dot_gemm_tile<Vnni512Dot, 4, 4>,
                                  int8_row_dots<Vnni512Dot>};
    return k;
}

} // namespace kestrel::detail
