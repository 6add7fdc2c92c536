// AVX-512 row kernels for the broadcast engine (float add/sub/mul/div/max/min).
// Built with -mavx512f/bw/vl/dq; reached only through simd_row_kernels_f32()
// after a run-time CPU check. Tails use masked loads/stores (no scalar loop).
// Bit-identical to the scalar functors (see broadcast_avx2.cpp).
#include <immintrin.h>

#include "kernels/broadcast.h"

namespace kestrel {
namespace detail {
namespace {

// Max/Min use the all-lanes maskz forms: same instruction, and they avoid GCC 12's
// false -Wmaybe-uninitialized on _mm512_max_ps/_mm512_min_ps.
constexpr __mmask16 kAll = 0xFFFF;

struct AddK {
    static __m512 v(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
};
struct SubK {
    static __m512 v(__m512 a, __m512 b) { return _mm512_sub_ps(a, b); }
};
struct MulK {
    static __m512 v(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
};
struct DivK {
    static __m512 v(__m512 a, __m512 b) { return _mm512_div_ps(a, b); }
};
struct MaxK {
    static __m512 v(__m512 a, __m512 b) { return _mm512_maskz_max_ps(kAll, b, a); }
};
struct MinK {
    static __m512 v(__m512 a, __m512 b) { return _mm512_maskz_min_ps(kAll, b, a); }
};

inline __mmask16 tail_mask(int64_t left) { return static_cast<__mmask16>((1u << left) - 1u); }

// A_VEC / B_VEC: whether the operand advances (1) or is a broadcast scalar (0).
template <class K, bool A_VEC, bool B_VEC> void row(float* o, const float* a, const float* b, int64_t n)
{
    const __m512 as = A_VEC ? _mm512_setzero_ps() : _mm512_set1_ps(*a);
    const __m512 bs = B_VEC ? _mm512_setzero_ps() : _mm512_set1_ps(*b);
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m512 r0 = K::v(A_VEC ? _mm512_loadu_ps(a + i) : as, B_VEC ? _mm512_loadu_ps(b + i) : bs);
        const __m512 r1 = K::v(A_VEC ? _mm512_loadu_ps(a + i + 16) : as, B_VEC ? _mm512_loadu_ps(b + i + 16) : bs);
        const __m512 r2 = K::v(A_VEC ? _mm512_loadu_ps(a + i + 32) : as, B_VEC ? _mm512_loadu_ps(b + i + 32) : bs);
        const __m512 r3 = K::v(A_VEC ? _mm512_loadu_ps(a + i + 48) : as, B_VEC ? _mm512_loadu_ps(b + i + 48) : bs);
        _mm512_storeu_ps(o + i, r0);
        _mm512_storeu_ps(o + i + 16, r1);
        _mm512_storeu_ps(o + i + 32, r2);
        _mm512_storeu_ps(o + i + 48, r3);
    }
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(o + i, K::v(A_VEC ? _mm512_loadu_ps(a + i) : as, B_VEC ? _mm512_loadu_ps(b + i) : bs));
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 va = A_VEC ? _mm512_maskz_loadu_ps(m, a + i) : as;
        const __m512 vb = B_VEC ? _mm512_maskz_loadu_ps(m, b + i) : bs;
        _mm512_mask_storeu_ps(o + i, m, K::v(va, vb));
    }
}

template <class K> constexpr SimdRowKernels entry()
{
    return SimdRowKernels{&row<K, true, true>, &row<K, true, false>, &row<K, false, true>};
}

} // namespace

const SimdRowKernels* row_kernels_avx512(SimdBinary op)
{
    static const SimdRowKernels table[kSimdBinaryCount] = {
        SimdRowKernels{}, entry<AddK>(), entry<SubK>(), entry<MulK>(), entry<DivK>(), entry<MaxK>(), entry<MinK>(),
    };
    const int i = static_cast<int>(op);
    return (i > 0 && i < kSimdBinaryCount) ? &table[i] : nullptr;
}

} // namespace detail
} // namespace kestrel
