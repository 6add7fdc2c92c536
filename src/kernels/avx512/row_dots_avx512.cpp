// The row dot products (float, half-float and bfloat16 weights) for AVX-512, 16-float vectors.
#include <immintrin.h>

#include "kernels/row_dots_impl.h"

namespace kestrel::detail {

namespace {
struct Avx512Halves {
    static float one(uint16_t h) { return _cvtsh_ss(h); }
    static VectorOf<16>::vec load(const uint16_t* p)
    {
        // The masked form: GCC 12 warns that _mm512_cvtph_ps reads an undefined vector.
        return (VectorOf<16>::vec)_mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    }
};
} // namespace

const RowDotKernel& row_dot_kernel_avx512()
{
    static const RowDotKernel k{"avx512", row_dots<VectorOf<16>, FloatWeights<VectorOf<16>>>,
                                   row_dots<VectorOf<16>, Avx512Halves>,
                                   row_dots<VectorOf<16>, Bf16Weights<VectorOf<16>>>};
    return k;
}

} // namespace kestrel::detail
