// The AVX-VNNI int8 GEMM tile, for CPUs with AVX2 and the VEX-encoded dot
// products but no AVX-512: vpdpbusd on 8 int32 lanes; 3 rows x 24 columns
// (9 accumulators of the 16 ymm registers). BM_Int8GemmConv at 1 thread,
// KESTREL_ISA=avx2, shapes alternating: 3x3 vectors 190-226 GOPS, 4x2
// 148-183, 5x2 123-224, 6x2 125-190, 4x4 113-119 (no registers left for B).
#include <immintrin.h>

#include "kernels/dot_gemm_tile.h"

namespace kestrel::detail {

namespace {

struct AvxVnniDot {
    using vec = __m256i;
    using operand = vec;
    using A = int8_t;
    using Sum = int32_t;
    static constexpr int width = 8;
    static vec set1(int32_t v) { return _mm256_set1_epi32(v); }
    static vec load(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
    static vec broadcast4(const int8_t* p) { return _mm256_set1_epi32(quad_word(p)); }
    static vec dot(vec acc, vec u, vec s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
    static void store(int32_t* p, vec v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
    static int32_t sum(vec v)
    {
        const __m128i half = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        const __m128i pairs = _mm_add_epi32(half, _mm_shuffle_epi32(half, 0x4e));
        return _mm_cvtsi128_si32(_mm_add_epi32(pairs, _mm_shuffle_epi32(pairs, 0xb1)));
    }
};

} // namespace

const Int8GemmKernel& int8_gemm_kernel_avxvnni()
{
    static const Int8GemmKernel k{"avxvnni", 3, 24, 1, dot_gemm_tile<AvxVnniDot, 3, 3>, int8_row_dots<AvxVnniDot>};
    return k;
}

} // namespace kestrel::detail
