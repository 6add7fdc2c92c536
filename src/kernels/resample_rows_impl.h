// The weighted row sums (resample_rows.h), written once for every ISA and
// element type: a file under kernels/<isa>/ instantiates them with
// VectorOf<width>.
#pragma once
#include <cstdint>
#include <cstring>

#include "kernels/resample_rows.h"
#include "kernels/vector_of.h"

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
    typename LanesOf<uint8_t, V::width>::type b;
    std::memcpy(&b, p, sizeof b);
    return __builtin_convertvector(b, typename V::vec);
}

// A value as its output element: float as it is; U8 rounded to nearest and
// saturated, NaN to 0 (as image::saturate_pixel).
inline float stored_one(float v, float*) { return v; }
inline uint8_t stored_one(float v, uint8_t*) { return static_cast<uint8_t>((v > 0.f ? (v < 255.f ? v : 255.f) : 0.f) + 0.5f); }

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

template <class V, class In, class Out>
void resample_rows(const In* const* rows, const float* w, int taps, int64_t n, Out* dst)
{
    using vec = typename V::vec;
    constexpr int64_t W = V::width;
    int64_t i = 0;
    for (; i + W <= n; i += W) {
        vec acc = rounded(load_floats<V>(rows[0] + i) * V::set1(w[0]));
        for (int k = 1; k < taps; ++k) acc = acc + rounded(load_floats<V>(rows[k] + i) * V::set1(w[k]));
        store_values<V>(dst + i, acc);
    }
    for (; i < n; ++i) {
        float acc = static_cast<float>(rows[0][i]) * w[0];
        for (int k = 1; k < taps; ++k) acc = acc + rounded(static_cast<float>(rows[k][i]) * w[k]);
        dst[i] = stored_one(acc, dst);
    }
}

template <class V> ResampleRowsKernel resample_rows_kernel_of(const char* isa)
{
    return ResampleRowsKernel{isa, resample_rows<V, float, float>, resample_rows<V, uint8_t, float>,
                              resample_rows<V, float, uint8_t>, resample_rows<V, uint8_t, uint8_t>};
}

} // namespace
} // namespace kestrel::detail
