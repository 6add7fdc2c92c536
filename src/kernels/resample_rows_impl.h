// The weighted row sums (resample_rows.h), written once for every ISA and
// element type: a file under kernels/<isa>/ instantiates them with
// VectorOf<width>.
#pragma once
#include <cstdint>
#include <cstring>

#include "kernels/resample_rows.h"
#include "kernels/vector_of.h"
#include "core/saturate.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

// A vector of W values of T.
template <class T, int W> struct LanesOf {
    typedef T type __attribute__((vector_size(W * sizeof(T))));
};

// W elements from p as a vector of floats (U8: widened exactly).
template <class V> typename V::vec load_floats(const float* p) { return V::load(p); }
template <class V> typename V::vec load_floats(const uint8_t* p)
{
    // Widened lane by lane into int32 lanes: GCC 12 makes that pmovzx, where
    // converting a byte vector takes each byte through a scalar register (13x
    // slower).
    typename LanesOf<int32_t, V::width>::type wide;
    for (int j = 0; j < V::width; ++j) wide[j] = p[j];
    return __builtin_convertvector(wide, typename V::vec);
}

// A value as its output element: float as it is; U8 rounded to nearest and
// saturated, NaN to 0.
inline float stored_one(float v, float*) { return v; }
inline uint8_t stored_one(float v, uint8_t*) { return saturate_pixel(v); }

template <class V> void store_values(float* p, typename V::vec v) { V::store(p, v); }
template <class V> void store_values(uint8_t* p, typename V::vec v)
{
    using vec = typename V::vec;
    using ints = typename LanesOf<int32_t, V::width>::type;
    using bytes = typename LanesOf<uint8_t, V::width>::type;
    const vec zero = V::set1(0.f), top = V::set1(255.f), half = V::set1(0.5f);
    v = v > zero ? v : zero; // NaN fails the comparison: 0
    v = v < top ? v : top;
    const ints rounded_down = __builtin_convertvector(v + half, ints); // >= 0: truncation rounds down
    const bytes b = __builtin_convertvector(rounded_down, bytes);
    std::memcpy(p, &b, sizeof b);
}

// The taps' weighted sum as the scalar code takes it: from the first
// product, each product(k) (tap k's value times its weight) rounded before it
// is added, in tap order. T is a float or a vector of them.
template <class T, class Product> __attribute__((always_inline)) inline T tap_sum(int taps, const Product& product)
{
    T acc = rounded(product(0));
    for (int k = 1; k < taps; ++k) acc = acc + rounded(product(k));
    return acc;
}

// Values [i, n) in vectors of V's width and then of each narrower width
// down to 4 (a tensor's rows are often 13-26 values): returns where it stopped.
template <class V, class In, class Out>
int64_t resample_vectors(const In* const* rows, const float* w, int taps, int64_t i, int64_t n, Out* dst)
{
    using vec = typename V::vec;
    constexpr int64_t W = V::width;
    for (; i + W <= n; i += W) {
        store_values<V>(dst + i, tap_sum<vec>(taps, [&](int k) { return load_floats<V>(rows[k] + i) * V::set1(w[k]); }));
    }
    if constexpr (W > 4) i = resample_vectors<VectorOf<W / 2>>(rows, w, taps, i, n, dst);
    return i;
}

template <class V, class In, class Out>
void resample_rows(const In* const* rows, const float* w, int taps, int64_t n, Out* dst)
{
    for (int64_t i = resample_vectors<V>(rows, w, taps, 0, n, dst); i < n; ++i)
        dst[i] = stored_one(tap_sum<float>(taps, [&](int k) { return static_cast<float>(rows[k][i]) * w[k]; }), dst);
}

// W values src[at[i]] as floats.
template <class V> typename V::vec gather_floats(const float* src, const int32_t* at) { return V::gather(src, at); }
template <class V> typename V::vec gather_floats(const uint8_t* src, const int32_t* at)
{
    return V::gather_bytes(src, at);
}

template <class V, class In>
void resample_gather(const In* src, const int32_t* at, const float* w, int taps, int64_t n, float* dst)
{
    using vec = typename V::vec;
    constexpr int64_t W = V::width;
    int64_t i = 0;
    for (; i + W <= n; i += W)
        V::store(dst + i, tap_sum<vec>(taps, [&](int k) {
                     return gather_floats<V>(src, at + k * n + i) * V::load(w + k * n + i);
                 }));
    for (; i < n; ++i)
        dst[i] = tap_sum<float>(taps, [&](int k) { return static_cast<float>(src[at[k * n + i]]) * w[k * n + i]; });
}

template <class V> ResampleRowsKernel resample_rows_kernel_of(const char* isa)
{
    return ResampleRowsKernel{isa,
                              resample_rows<V, float, float>,
                              resample_rows<V, uint8_t, float>,
                              resample_rows<V, float, uint8_t>,
                              resample_rows<V, uint8_t, uint8_t>,
                              resample_gather<V, float>,
                              resample_gather<V, uint8_t>};
}

} // namespace
} // namespace kestrel::detail
