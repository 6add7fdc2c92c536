// AVX2 row kernels for the broadcast engine (float add/sub/mul/div/max/min).
// Built with -mavx2 -mfma; reached only through simd_row_kernels_f32() after a
// run-time CPU check. Results are bit-identical to the scalar functors: the
// operations are single IEEE ops, and max/min keep std::max/std::min's operand
// order (vmaxps(b, a) == (a < b ? b : a)).
#include <immintrin.h>

#include "kernels/broadcast.h"

namespace kestrel {
namespace detail {
namespace {

struct AddK {
    static __m256 v(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
    static float s(float a, float b) { return a + b; }
};
struct SubK {
    static __m256 v(__m256 a, __m256 b) { return _mm256_sub_ps(a, b); }
    static float s(float a, float b) { return a - b; }
};
struct MulK {
    static __m256 v(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
    static float s(float a, float b) { return a * b; }
};
struct DivK {
    static __m256 v(__m256 a, __m256 b) { return _mm256_div_ps(a, b); }
    static float s(float a, float b) { return a / b; }
};
struct MaxK {
    static __m256 v(__m256 a, __m256 b) { return _mm256_max_ps(b, a); }
    static float s(float a, float b) { return a < b ? b : a; }
};
struct MinK {
    static __m256 v(__m256 a, __m256 b) { return _mm256_min_ps(b, a); }
    static float s(float a, float b) { return b < a ? b : a; }
};

template <class K> void vv(float* o, const float* a, const float* b, int64_t n)
{
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256 r0 = K::v(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        const __m256 r1 = K::v(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
        const __m256 r2 = K::v(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16));
        const __m256 r3 = K::v(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24));
        _mm256_storeu_ps(o + i, r0);
        _mm256_storeu_ps(o + i + 8, r1);
        _mm256_storeu_ps(o + i + 16, r2);
        _mm256_storeu_ps(o + i + 24, r3);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, K::v(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
    for (; i < n; ++i) o[i] = K::s(a[i], b[i]);
}

template <class K> void vs(float* o, const float* a, const float* b, int64_t n)
{
    const float bs = *b;
    const __m256 bv = _mm256_set1_ps(bs);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256 r0 = K::v(_mm256_loadu_ps(a + i), bv);
        const __m256 r1 = K::v(_mm256_loadu_ps(a + i + 8), bv);
        const __m256 r2 = K::v(_mm256_loadu_ps(a + i + 16), bv);
        const __m256 r3 = K::v(_mm256_loadu_ps(a + i + 24), bv);
        _mm256_storeu_ps(o + i, r0);
        _mm256_storeu_ps(o + i + 8, r1);
        _mm256_storeu_ps(o + i + 16, r2);
        _mm256_storeu_ps(o + i + 24, r3);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, K::v(_mm256_loadu_ps(a + i), bv));
    for (; i < n; ++i) o[i] = K::s(a[i], bs);
}

template <class K> void sv(float* o, const float* a, const float* b, int64_t n)
{
    const float as = *a;
    const __m256 av = _mm256_set1_ps(as);
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256 r0 = K::v(av, _mm256_loadu_ps(b + i));
        const __m256 r1 = K::v(av, _mm256_loadu_ps(b + i + 8));
        const __m256 r2 = K::v(av, _mm256_loadu_ps(b + i + 16));
        const __m256 r3 = K::v(av, _mm256_loadu_ps(b + i + 24));
        _mm256_storeu_ps(o + i, r0);
        _mm256_storeu_ps(o + i + 8, r1);
        _mm256_storeu_ps(o + i + 16, r2);
        _mm256_storeu_ps(o + i + 24, r3);
    }
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(o + i, K::v(av, _mm256_loadu_ps(b + i)));
    for (; i < n; ++i) o[i] = K::s(as, b[i]);
}

template <class K> constexpr SimdRowKernels entry() { return SimdRowKernels{&vv<K>, &vs<K>, &sv<K>}; }

} // namespace

const SimdRowKernels* row_kernels_avx2(SimdBinary op)
{
    static const SimdRowKernels table[kSimdBinaryCount] = {
        SimdRowKernels{}, entry<AddK>(), entry<SubK>(), entry<MulK>(), entry<DivK>(), entry<MaxK>(), entry<MinK>(),
    };
    const int i = static_cast<int>(op);
    return (i > 0 && i < kSimdBinaryCount) ? &table[i] : nullptr;
}

} // namespace detail
} // namespace kestrel
