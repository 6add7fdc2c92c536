// The row dot products (float, half-float and bfloat16 weights) for AVX2 + FMA + F16C, 8-float vectors.
#include <immintrin.h>

#include "kernels/row_dots_impl.h"

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

const RowDotKernel& row_dot_kernel_avx2()
{
    static const RowDotKernel k{"avx2", row_dots<VectorOf<8>, FloatWeights<VectorOf<8>>>,
                                   row_dots<VectorOf<8>, F16cHalves>,
                                   row_dots<VectorOf<8>, Bf16Weights<VectorOf<8>>>};
    return k;
}

} // namespace kestrel::detail
