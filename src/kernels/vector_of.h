// A vector of W floats for the per-ISA kernel templates (GCC/Clang vector
// extensions): a file under kernels/<isa>/ instantiates a template with
// VectorOf<width>, and its ISA flags decide the instructions (SSE2 or NEON for
// 4 floats, AVX for 8, AVX-512 for 16). Those files are compiled with
// -ffp-contract=fast, so a*b + c becomes one fused multiply-add there.
#pragma once
#include <cstdint>
#include <cstring>
#include <utility>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

// A vec is never an argument or result of a function that is not inlined: GCC
// then leaves out the vzeroupper at its return (it assumes an AVX caller), and
// the SSE code of the generic kernels after it runs with the upper register
// halves dirty, 2-3x slower on AMD Zen 4 (false dependencies on every xmm write).
//
// Everything here has internal linkage (an unnamed namespace): each kernels/<isa>/
// file compiles its own copy with its own flags, which the linker never merges
// with another ISA's (an AVX-512 copy of a helper must not serve the generic kernel).
namespace kestrel::detail {
namespace {

// v as a rounded value: a multiply before it is not fused into an add after
// it (the ISA files are compiled with -ffp-contract=fast), where the scalar
// code's bits must be kept.
template <class Vec> inline Vec rounded(Vec v)
{
#if defined(__x86_64__) || defined(__i386__)
    asm("" : "+v"(v));
#elif defined(__aarch64__)
    asm("" : "+w"(v));
#endif
    return v;
}

template <int W> struct VectorOf {
    typedef float vec __attribute__((vector_size(W * sizeof(float))));
    static constexpr int width = W;
    static vec load(const float* p)
    {
        vec v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    static void store(float* p, vec v) { std::memcpy(p, &v, sizeof v); }
    static vec set1(float x)
    {
        float lanes[W]; // compilers turn this into one broadcast ("vec{} + x" would add 0.f)
        for (int i = 0; i < W; ++i) lanes[i] = x;
        return load(lanes);
    }
    static vec fmadd(vec a, vec b, vec c) { return a * b + c; }
    // The correctly rounded square root of each lane (one instruction where the ISA has it).
    static vec sqrt(vec v)
    {
#if defined(__AVX512F__)
        if constexpr (W == 16) return vec(_mm512_sqrt_ps(__m512(v)));
#endif
#if defined(__AVX2__)
        if constexpr (W == 8) return vec(_mm256_sqrt_ps(__m256(v)));
#endif
#if defined(__SSE2__)
        if constexpr (W == 4) return vec(_mm_sqrt_ps(__m128(v)));
#endif
        float lanes[W];
        std::memcpy(lanes, &v, sizeof v);
        for (float& l : lanes) l = __builtin_sqrtf(l);
        return load(lanes);
    }
    // base[index[i]] in lane i: one gather instruction where the ISA has it
    // (the masked forms, whose merge source is set: GCC 12 warns about the
    // others' undefined one).
    static vec gather(const float* base, const int32_t* index)
    {
#if defined(__AVX512F__)
        if constexpr (W == 16)
            return vec(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xffff, _mm512_loadu_si512(index), base, 4));
#endif
#if defined(__AVX2__)
        if constexpr (W == 8) {
            const __m256i at = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index));
            const __m256 all = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
            return vec(_mm256_mask_i32gather_ps(_mm256_setzero_ps(), base, at, all, 4));
        }
#endif
        float lanes[W];
        for (int i = 0; i < W; ++i) lanes[i] = base[index[i]];
        return load(lanes);
    }
    // The byte base[index[i]] as a float in lane i. Gathers read 4 bytes at
    // each index: base + index[i] + 3 must be readable.
    static vec gather_bytes(const uint8_t* base, const int32_t* index)
    {
#if defined(__AVX512F__)
        if constexpr (W == 16) {
            const __m512i words =
                _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), 0xffff, _mm512_loadu_si512(index), base, 1);
            return vec(_mm512_maskz_cvtepi32_ps(0xffff, _mm512_and_si512(words, _mm512_set1_epi32(0xff))));
        }
#endif
#if defined(__AVX2__)
        if constexpr (W == 8) {
            const __m256i at = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index));
            const __m256i words = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), reinterpret_cast<const int*>(base),
                                                              at, _mm256_set1_epi32(-1), 1);
            return vec(_mm256_cvtepi32_ps(_mm256_and_si256(words, _mm256_set1_epi32(0xff))));
        }
#endif
        float lanes[W];
        for (int i = 0; i < W; ++i) lanes[i] = base[index[i]];
        return load(lanes);
    }
};

// Swaps the off-diagonal HxH blocks of each 2Hx2H block of rows a, b (b is
// H rows below a): a[j + H] <-> b[j] for the lanes j with bit H clear.
template <class Vec, int W, int H, size_t... J> inline void swap_blocks(Vec& a, Vec& b, std::index_sequence<J...>)
{
    const Vec na = __builtin_shufflevector(a, b, ((J & H) ? W + J - H : J)...);
    const Vec nb = __builtin_shufflevector(a, b, ((J & H) ? W + J : J + H)...);
    a = na;
    b = nb;
}

// r[i] lane j <- r[j] lane i, for a square of V::width vectors: block swaps
// of halves, then quarters, ... then single lanes.
// A register tile of R x C accumulators clamped to [bounds[0], bounds[1]],
// each as std::min(std::max(x, lo), hi) gives it (a fused ReLU or Clip, the
// same bits). Inlined always: a call would take the tile through memory.
template <class V, int R, int C>
__attribute__((always_inline)) inline void clamp_tile(typename V::vec (&acc)[R][C], const float* bounds)
{
    using vec = typename V::vec;
    const vec lo = V::set1(bounds[0]), hi = V::set1(bounds[1]);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 32
        for (int j = 0; j < C; ++j) {
            const vec x = acc[i][j] < lo ? lo : acc[i][j]; // std::max(x, lo)
            acc[i][j] = hi < x ? hi : x;                   // std::min(x, hi)
        }
}

template <class V, int H = V::width / 2> inline void transpose_square(typename V::vec (&r)[V::width])
{
    constexpr int W = V::width;
#pragma GCC unroll 16
    for (int i = 0; i < W; ++i)
        if ((i & H) == 0) swap_blocks<typename V::vec, W, H>(r[i], r[i + H], std::make_index_sequence<W>{});
    if constexpr (H > 1) transpose_square<V, H / 2>(r);
}

// The lanes First, First + 1, ... of v, as many as I has (a part of a wider vector).
template <int First, class Vec, size_t... I> inline auto lanes_from(Vec v, std::index_sequence<I...>)
{
    return __builtin_shufflevector(v, v, (First + I)...);
}

// The vector of a's lanes then b's (two halves of a vector twice as wide).
template <class Vec, size_t... I> inline auto joined(Vec a, Vec b, std::index_sequence<I...>)
{
    return __builtin_shufflevector(a, b, I...);
}

} // namespace
} // namespace kestrel::detail
