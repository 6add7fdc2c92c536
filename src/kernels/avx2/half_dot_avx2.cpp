// The half-float dot products for AVX2 + FMA + F16C, 8-float vectors.
#include <immintrin.h>

#include "kernels/half_dot_rows.h"

namespace kestrel::detail {

namespace {
struct F16cHalves {
    static float one(uint16_t h) { return _cvtsh_ss(h); }
    static VectorOf<8>::vec load(const uint16_t* p)
    {
        return (VectorOf<8>::vec)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
};
} // namespace

const HalfDotKernel& half_dot_kernel_avx2()
{
    static const HalfDotKernel k{"avx2", half_dot_rows<VectorOf<8>, F16cHalves>};
    return k;
}

} // namespace kestrel::detail
