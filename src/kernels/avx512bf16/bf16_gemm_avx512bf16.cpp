// The AVX512-BF16 GEMM tile: vdpbf16ps, 16 fp32 lanes each summing a word's
// two bfloat16 products; 4 rows x 64 columns, as the VNNI int8 tile.
#include <immintrin.h>

#include "kernels/bf16_gemm.h"
#include "kernels/dot_gemm_tile.h"

namespace kestrel::detail {

namespace {

struct Bf16Dot512 {
    using vec = __m512;
    using operand = __m512bh;
    using A = uint16_t;
    using Sum = float;
    static constexpr int width = 16;
    static vec set1(float v) { return _mm512_set1_ps(v); }
    static operand load(const uint8_t* p) { return (__m512bh)_mm512_loadu_si512(p); }
    static operand broadcast4(const uint16_t* p) { return (__m512bh)_mm512_set1_epi32(quad_word(p)); }
    static vec dot(vec acc, operand b, operand a) { return _mm512_dpbf16_ps(acc, b, a); }
    static void store(float* p, vec v) { _mm512_storeu_ps(p, v); }
};

} // namespace

const Bf16GemmKernel& bf16_gemm_kernel_avx512bf16()
{
    static const Bf16GemmKernel k{"avx512bf16", 4, 64, 1, dot_gemm_tile<Bf16Dot512, 4, 4>};
    return k;
}

} // namespace kestrel::detail
