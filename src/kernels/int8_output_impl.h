// The int8 output kernels (int8_output.h), written once for every ISA: a file
// under kernels/<isa>/ instantiates int8_output_kernel_of<VectorOf<width>>.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/int8_output.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

template <class V> struct Int8Lanes {
    using vec = typename V::vec;
    // int32 lanes: the type of a comparison (gcc drops the vector attribute
    // of a typedef that depends on a template parameter in some uses).
    using ivec = decltype(vec{} < vec{});
    typedef uint32_t uvec __attribute__((vector_size(V::width * 4)));
    typedef int8_t bytes __attribute__((vector_size(V::width)));
    static constexpr int W = V::width;

    // float2int8 (ops/quant/int8.h) lane by lane: clamp (NaN to 0), then
    // half away from zero as a truncation after adding 0.5 - 2^-25 with the
    // value's sign: an exact half then rounds up to the next integer, a value
    // just under one stays under (checked for every float in [-127, 127]).
    // NaNs = false: the caller knows v has none (two instructions less).
    template <bool NaNs = true> static bytes to_int8(vec v)
    {
        return __builtin_convertvector(to_int32<NaNs>(v), bytes);
    }

    // The same in int32 lanes. NaN first, then the clamp as two steps (each
    // one max / min instruction; as one nested choice the compiler keeps
    // NaN's path and blends), the half as the value's sign bit on 0.49999997
    // (one bitwise instruction, not a compare and a blend).
    template <bool NaNs = true> static ivec to_int32(vec v)
    {
        v = rounded(v); // a product before it stays rounded
        if constexpr (NaNs) v = v == v ? v : V::set1(0.f);
        const vec c = clamped(v, 127.f);
        return __builtin_convertvector(c + with_sign_of(c, 0.49999997f), ivec);
    }

    // c (no NaN) clamped to [-limit, limit]: one max and one min.
    static vec clamped(vec c, float limit)
    {
#if defined(__AVX512F__)
        if constexpr (W == 16) return vec(_mm512_min_ps(_mm512_max_ps(__m512(c), _mm512_set1_ps(-limit)), _mm512_set1_ps(limit)));
#endif
#if defined(__AVX__)
        if constexpr (W == 8) return vec(_mm256_min_ps(_mm256_max_ps(__m256(c), _mm256_set1_ps(-limit)), _mm256_set1_ps(limit)));
#endif
        c = c < V::set1(-limit) ? V::set1(-limit) : c;
        return c > V::set1(limit) ? V::set1(limit) : c;
    }

    // `magnitude` with c's sign bit (one ternary-logic instruction on AVX-512).
    static vec with_sign_of(vec c, float magnitude)
    {
#if defined(__AVX512F__)
        if constexpr (W == 16)
            return vec(_mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(__m512(c)), _mm512_set1_epi32(static_cast<int32_t>(0x80000000u)),
                                                                     _mm512_castps_si512(_mm512_set1_ps(magnitude)), 0xEA)));
#endif
        return (vec)(((ivec)c & static_cast<int32_t>(0x80000000u)) | (ivec)V::set1(magnitude));
    }

    // The first `count` bytes at p as int32 lanes (0..255; the rest 0).
    static ivec widened_bytes(const int8_t* p, int64_t count)
    {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
        if constexpr (W == 16)
            return (ivec)_mm512_cvtepu8_epi32(count == W ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))
                                                         : _mm_maskz_loadu_epi8(tail_mask(count), p));
#endif
#if defined(__AVX2__)
        if constexpr (W == 8)
            if (count == W) return (ivec)_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
#endif
        ivec v{};
        for (int64_t i = 0; i < count; ++i) v[i] = static_cast<uint8_t>(p[i]);
        return v;
    }

    static vec as_floats(ivec s) { return __builtin_convertvector(s, vec); }
    static vec as_floats(vec s) { return s; }

    // residual: the lanes' residual values, or null.
    template <class Sums>
    static vec dequantized(Sums s, vec scale, const float* bias, const vec* residual, const float* clamp)
    {
        vec v = rounded(as_floats(s) * scale);
        if (bias) v = v + V::set1(*bias);
        if (residual) v = v + *residual;
        if (clamp) {
            const vec low = v < V::set1(clamp[0]) ? V::set1(clamp[0]) : v;
            v = V::set1(clamp[1]) < low ? V::set1(clamp[1]) : low;
        }
        return v;
    }

    // f(i, count) for the vectors of [0, n): count W, then the tail's count.
    template <class F> static void each_vector(int64_t n, F f)
    {
        int64_t i = 0;
        for (; i + W <= n; i += W) f(i, W);
        if (i < n) f(i, n - i);
    }

    // The first `count` lanes (the rest 0), by masked moves where AVX-512
    // has them: short rows (a 14x14 plane's) are all tail.
    template <class T, class Vec> static Vec load(const T* p, int64_t count)
    {
        Vec v{};
        if (count == W) {
            std::memcpy(&v, p, sizeof v);
            return v;
        }
#if defined(__AVX512F__)
        if constexpr (W == 16 && sizeof(T) == 4) return Vec(_mm512_maskz_loadu_epi32(tail_mask(count), p));
#endif
        std::memcpy(&v, p, sizeof(T) * static_cast<size_t>(count));
        return v;
    }
    template <class T, class Vec> static void store(T* p, Vec v, int64_t count)
    {
        if (count == W) return static_cast<void>(std::memcpy(p, &v, sizeof(T) * W));
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
        if constexpr (W == 16 && sizeof(T) == 4) return _mm512_mask_storeu_epi32(p, tail_mask(count), __m512i(v));
        if constexpr (W == 16 && sizeof(T) == 1) return _mm_mask_storeu_epi8(p, tail_mask(count), __m128i(v));
#endif
        std::memcpy(p, &v, sizeof(T) * static_cast<size_t>(count));
    }
#if defined(__AVX512F__)
    static __mmask16 tail_mask(int64_t count) { return static_cast<__mmask16>((1u << count) - 1); }
#endif

    // The first `count` lanes (values in [-128, 127]) stored as bytes.
    static void store_bytes(int8_t* q, ivec v, int64_t count) { store(q, __builtin_convertvector(v, bytes), count); }

    // Four vectors of lanes in [-128, 127] stored as 4 * W bytes: where
    // AVX2 / AVX-512 have them, two saturating packs (exact in that range)
    // and one permutation of the 4-byte groups they leave per 128-bit lane
    // (lane L holds a, b, c, d's values 4L .. 4L+3), not a narrowing per vector.
    static void store_bytes4(int8_t* q, ivec a, ivec b, ivec c, ivec d)
    {
#if defined(__AVX512BW__)
        if constexpr (W == 16) {
            const __m512i packed = _mm512_packs_epi16(_mm512_packs_epi32(__m512i(a), __m512i(b)),
                                                      _mm512_packs_epi32(__m512i(c), __m512i(d)));
            const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
            return _mm512_storeu_si512(q, _mm512_permutexvar_epi32(order, packed));
        }
#endif
#if defined(__AVX2__)
        if constexpr (W == 8) {
            const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(__m256i(a), __m256i(b)),
                                                      _mm256_packs_epi32(__m256i(c), __m256i(d)));
            const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
            return _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), _mm256_permutevar8x32_epi32(packed, order));
        }
#endif
        store_bytes(q, a, W);
        store_bytes(q + W, b, W);
        store_bytes(q + 2 * W, c, W);
        store_bytes(q + 3 * W, d, W);
    }
};

// The lanes of sums of type Sum (int32, or floats holding integers exactly).
template <class V, class Sum>
using SumLanes = std::conditional_t<std::is_same_v<Sum, float>, typename V::vec, typename Int8Lanes<V>::ivec>;

template <class V, class Sum>
void int8_dequantize(const Sum* sums, int64_t n, float scale, const float* bias, const float* residual,
                     const float* clamp, float* y)
{
    using L = Int8Lanes<V>;
    const typename V::vec s = V::set1(scale);
    L::each_vector(n, [&](int64_t i, int64_t count) {
        typename V::vec r{};
        if (residual) r = L::template load<float, typename V::vec>(residual + i, count);
        const auto v = L::dequantized(L::template load<Sum, SumLanes<V, Sum>>(sums + i, count), s, bias,
                                      residual ? &r : nullptr, clamp);
        L::store(y + i, v, count);
    });
}

template <class V> void int8_quantize(const float* x, int64_t n, float scale, int8_t* q)
{
    using L = Int8Lanes<V>;
    const typename V::vec s = V::set1(scale);
    L::each_vector(n, [&](int64_t i, int64_t count) {
        L::store(q + i, L::to_int8(L::template load<float, typename V::vec>(x + i, count) * s), count);
    });
}

// The requantization when no NaN can arise, its constants hoisted (a byte
// store may alias them, so the compiler reloads them per vector) and the
// steps this layer does not take left out: Low / High, the clamp's bounds
// (ReLU has no upper one); Nonnegative, every product >= 0 (a lower clamp >=
// 0, a positive output scale), so the clamp to [-127, 127] and the half's
// sign keep only their upper side. A missing bias adds 0, which changes only
// a zero's sign. Bytes 4 vectors at a time (store_bytes4).
template <class V, class Sum, bool Low, bool High, bool Nonnegative>
void int8_requantize_finite(const Sum* sums, int64_t n, float scale, float bias, float low, float high,
                            float out_scale, int8_t* q)
{
    using L = Int8Lanes<V>;
    using vec = typename V::vec;
    const vec s = V::set1(scale), b = V::set1(bias), lo = V::set1(low), hi = V::set1(high), out = V::set1(out_scale);
    const auto lanes = [&](int64_t i, int64_t count) __attribute__((always_inline)) {
        vec v = rounded(L::as_floats(L::template load<Sum, SumLanes<V, Sum>>(sums + i, count)) * s) + b;
        if constexpr (Low) v = v < lo ? lo : v;
        if constexpr (High) v = hi < v ? hi : v;
        v = rounded(v * out);
        if constexpr (!Nonnegative) return L::template to_int32<false>(v);
        const vec c = v > V::set1(127.f) ? V::set1(127.f) : v;
        return __builtin_convertvector(c + V::set1(0.49999997f), typename L::ivec);
    };
    int64_t i = 0;
    for (; i + 4 * L::W <= n; i += 4 * L::W)
        L::store_bytes4(q + i, lanes(i, L::W), lanes(i + L::W, L::W), lanes(i + 2 * L::W, L::W),
                        lanes(i + 3 * L::W, L::W));
    for (; i < n; i += L::W) {
        const int64_t count = std::min<int64_t>(L::W, n - i);
        L::store_bytes(q + i, lanes(i, count), count);
    }
}

template <class V, class Sum>
void int8_requantize(const Sum* sums, int64_t n, float scale, const float* bias, const float* clamp, float out_scale,
                     int8_t* q)
{
    // No NaN can arise when every dequantized value is finite (|sum| <= 2^31)
    // and so is the output scale: a product overflowing to infinity clamps.
    const float largest = std::fabs(scale) * 2147483648.f + (bias ? std::fabs(*bias) : 0.f);
    if (!std::isfinite(largest) || !std::isfinite(out_scale)) {
        using L = Int8Lanes<V>;
        const typename V::vec s = V::set1(scale), out = V::set1(out_scale);
        return L::each_vector(n, [&](int64_t i, int64_t count) {
            const auto sum = L::template load<Sum, SumLanes<V, Sum>>(sums + i, count);
            L::store(q + i, L::to_int8(L::dequantized(sum, s, bias, nullptr, clamp) * out), count);
        });
    }
    const float b = bias ? *bias : 0.f;
    const bool low = clamp && clamp[0] != -INFINITY, high = clamp && clamp[1] != INFINITY;
    const float lo = clamp ? clamp[0] : 0.f, hi = clamp ? clamp[1] : 0.f;
    const auto run = [&](auto has_low, auto has_high, auto nonnegative) {
        int8_requantize_finite<V, Sum, has_low, has_high, nonnegative>(sums, n, scale, b, lo, hi, out_scale, q);
    };
    constexpr std::true_type yes{};
    constexpr std::false_type no{};
    if (low && lo >= 0.f && out_scale > 0.f) return high ? run(yes, yes, yes) : run(yes, no, yes);
    if (low) return high ? run(yes, yes, no) : run(yes, no, no);
    return high ? run(no, yes, no) : run(no, no, no);
}

// Four lane vectors of bytes (in int32 lanes) as words of four bytes, XOR flip.
template <class V, class Lanes>
void store_offset_quads(uint32_t* dst, Lanes b0, Lanes b1, Lanes b2, Lanes b3, uint32_t flip, int64_t count)
{
    const Lanes w = (b0 & 0xFF) | (b1 & 0xFF) << 8 | (b2 & 0xFF) << 16 | b3 << 24;
    Int8Lanes<V>::store(reinterpret_cast<int32_t*>(dst), w ^ static_cast<int32_t>(flip), count);
}

template <class V> void int8_offset_quads(const int8_t* const* src, int64_t n, uint32_t flip, uint32_t* words)
{
    using L = Int8Lanes<V>;
    L::each_vector(n, [&](int64_t i, int64_t count) {
        store_offset_quads<V>(words + i, L::widened_bytes(src[0] + i, count), L::widened_bytes(src[1] + i, count),
                              L::widened_bytes(src[2] + i, count), L::widened_bytes(src[3] + i, count), flip, count);
    });
}

template <class V> void int8_quantize_offset_quads(const float* const* src, int64_t n, float scale, uint32_t* words)
{
    using L = Int8Lanes<V>;
    const typename V::vec s = V::set1(scale);
    const auto lanes = [&](const float* p, int64_t count) {
        return L::to_int32(L::template load<float, typename V::vec>(p, count) * s);
    };
    L::each_vector(n, [&](int64_t i, int64_t count) {
        store_offset_quads<V>(words + i, lanes(src[0] + i, count), lanes(src[1] + i, count), lanes(src[2] + i, count),
                              lanes(src[3] + i, count), 0x80808080u, count);
    });
}

// ONNX's requantization with each lane's offset and scale from per(i, count)
// (a pair of the lanes' int32 offsets and float scales).
template <class V, class Sum, class Per>
void int8_requantize_even_with(const Sum* sums, int64_t n, Per per, int32_t zero_point, int32_t lo, int32_t hi,
                               uint8_t* q)
{
    using L = Int8Lanes<V>;
    using vec = typename V::vec;
    using ivec = typename L::ivec;
    // Clamped first to the range the zero point leaves (integers, so the
    // clamp and the rounding commute), then rounded half to even by adding
    // and taking away 1.5 * 2^23, exact for |v| < 2^22.
    const vec low = V::set1(static_cast<float>(lo - zero_point)), high = V::set1(static_cast<float>(hi - zero_point)),
              magic = V::set1(12582912.f);
    L::each_vector(n, [&](int64_t i, int64_t count) {
        const auto loaded = L::template load<Sum, SumLanes<V, Sum>>(sums + i, count);
        ivec t;
        if constexpr (std::is_same_v<Sum, float>) t = __builtin_convertvector(loaded, ivec);
        else t = loaded;
        const auto [offset, scale] = per(i, count);
        t = (ivec)((typename L::uvec)t + (typename L::uvec)offset); // wrapping, as the accumulation
        vec v = rounded(L::as_floats(t) * scale);
        v = v < low ? low : v;
        v = v > high ? high : v;
        v = rounded(v + magic) - magic;
        const ivec r = __builtin_convertvector(v, ivec) + zero_point;
        L::store(reinterpret_cast<int8_t*>(q + i), __builtin_convertvector(r, typename L::bytes), count);
    });
}

template <class V, class Sum>
void int8_requantize_even(const Sum* sums, int64_t n, int32_t offset, float scale, int32_t zero_point, int32_t lo,
                          int32_t hi, uint8_t* q)
{
    using L = Int8Lanes<V>;
    const typename L::ivec offsets = typename L::ivec{} + offset;
    const typename V::vec scales = V::set1(scale);
    int8_requantize_even_with<V>(sums, n, [&](int64_t, int64_t) { return std::pair(offsets, scales); }, zero_point, lo,
                                 hi, q);
}

template <class V>
void int8_requantize_even_columns(const int32_t* sums, int64_t n, const int32_t* offsets, const float* scales,
                                  int32_t zero_point, int32_t lo, int32_t hi, uint8_t* q)
{
    using L = Int8Lanes<V>;
    int8_requantize_even_with<V>(
        sums, n,
        [&](int64_t i, int64_t count) {
            return std::pair(L::template load<int32_t, typename L::ivec>(offsets + i, count),
                             L::template load<float, typename V::vec>(scales + i, count));
        },
        zero_point, lo, hi, q);
}

// ONNX's QuantizeLinear of floats: x / scale (a division, as ONNX Runtime),
// clamped to the range the zero point leaves, rounded half to even, plus the
// zero point; NaN gives 0.
template <class V>
void int8_quantize_even(const float* x, int64_t n, float scale, int32_t zero_point, int32_t lo, int32_t hi, uint8_t* q)
{
    using L = Int8Lanes<V>;
    using vec = typename V::vec;
    const vec s = V::set1(scale), low = V::set1(static_cast<float>(lo - zero_point)),
              high = V::set1(static_cast<float>(hi - zero_point)), magic = V::set1(12582912.f),
              nan_value = V::set1(static_cast<float>(-zero_point));
    L::each_vector(n, [&](int64_t i, int64_t count) {
        vec v = L::template load<float, vec>(x + i, count) / s;
        v = v < low ? low : v;
        v = v > high ? high : v;
        v = v == v ? v : nan_value;
        v = rounded(v + magic) - magic;
        const typename L::ivec r = __builtin_convertvector(v, typename L::ivec) + zero_point;
        L::store(reinterpret_cast<int8_t*>(q + i), __builtin_convertvector(r, typename L::bytes), count);
    });
}

// ONNX's DequantizeLinear of bytes: float(q - zero_point) * scale.
template <class V>
void int8_dequantize_bytes(const uint8_t* q, int64_t n, bool is_signed, int32_t zero_point, float scale, float* y)
{
    using L = Int8Lanes<V>;
    const typename V::vec s = V::set1(scale);
    L::each_vector(n, [&](int64_t i, int64_t count) {
        typename L::ivec b = L::widened_bytes(reinterpret_cast<const int8_t*>(q + i), count);
        if (is_signed) b = (b ^ 0x80) - 0x80;
        L::store(y + i, L::as_floats(b - zero_point) * s, count);
    });
}

template <class V> const Int8OutputKernel& int8_output_kernel_of(const char* isa)
{
    static const Int8OutputKernel k{isa,
                                    int8_dequantize<V, int32_t>,
                                    int8_dequantize<V, float>,
                                    int8_quantize<V>,
                                    int8_requantize<V, int32_t>,
                                    int8_requantize<V, float>,
                                    int8_offset_quads<V>,
                                    int8_quantize_offset_quads<V>,
                                    int8_requantize_even<V, int32_t>,
                                    int8_requantize_even<V, float>,
                                    int8_requantize_even_columns<V>,
                                    int8_quantize_even<V>,
                                    int8_dequantize_bytes<V>};
    return k;
}

} // namespace
} // namespace kestrel::detail
