// exp() on a vector of floats, for the per-ISA kernel templates (vector_of.h).
//
// x = n*ln2 + r with n = round(x / ln2), |r| <= ln2/2 (ln2 in two parts, so
// n*ln2 loses nothing), e^r from a degree-6 polynomial (Cephes' expf
// coefficients), then scaled by 2^n, built in the exponent bits in two halves
// so that results in the subnormal range are rounded once. Every lane takes
// the same instructions, with no table and no branch. Accuracy is tested
// against exp in double (tests/test_activation_kernels.cpp).
#pragma once
#include <cstdint>
#include <limits>

#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

template <class V> struct VectorMask {
    using vec = typename V::vec;
    typedef int32_t ivec __attribute__((vector_size(sizeof(vec))));

    // Lanes of `mask` that are all ones take a, the others b.
    static vec select(ivec mask, vec a, vec b) { return (vec)((mask & (ivec)a) | (~mask & (ivec)b)); }
    // Clamped to [lo, hi]; a NaN stays NaN.
    static vec clamp(vec x, float lo, float hi)
    {
        const vec l = V::set1(lo), h = V::set1(hi);
        return select(x < l, l, select(x > h, h, x));
    }
    static vec abs(vec x) { return select(x < V::set1(0.f), -x, x); }
    // 2^n for integer n in [-126, 127].
    static vec pow2(ivec n) { return (vec)((n + 127) << 23); }
};

// Always inlined: a call per vector would spill the constants (and see vector_of.h).
template <class V> inline __attribute__((always_inline)) typename V::vec exp_vec(typename V::vec x)
{
    using M = VectorMask<V>;
    using vec = typename V::vec;
    using ivec = typename M::ivec;
    // Clamped to [-110, 89] (a NaN stays NaN and makes every value after it
    // NaN): from 88.7228394 on, e^r * 2^128 overflows to infinity, and below
    // -103.972084 the result rounds to 0, so the ends need no test of their own.
    const vec lo = V::set1(-110.f), hi = V::set1(89.f);
    const vec xc = hi < x ? hi : (x < lo ? lo : x);

    const vec round_magic = V::set1(12582912.f); // 1.5 * 2^23: adding it rounds to an integer
    const vec n = (xc * V::set1(1.44269504088896341f) + round_magic) - round_magic;
    const vec r = (xc - n * V::set1(0.693359375f)) - n * V::set1(-2.12194440e-4f);

    vec p = V::set1(1.9875691500e-4f);
    p = p * r + V::set1(1.3981999507e-3f);
    p = p * r + V::set1(8.3334519073e-3f);
    p = p * r + V::set1(4.1665795894e-2f);
    p = p * r + V::set1(1.6666665459e-1f);
    p = p * r + V::set1(5.0000001201e-1f);
    const vec er = p * (r * r) + r + V::set1(1.f);

    // n is in [-159, 128]: two halves, each in [-80, 64].
    const ivec ni = __builtin_convertvector(n, ivec);
    const ivec half = ni >> 1;
    return er * M::pow2(half) * M::pow2(ni - half);
}

} // namespace
} // namespace kestrel::detail
