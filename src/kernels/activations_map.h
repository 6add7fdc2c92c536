// The activation kernels (activations.h), written once for every ISA: a file
// under kernels/<isa>/ instantiates map_exp_activation<VectorOf<width>>,
// map_piecewise_activation<VectorOf<width>> and lrn_across_channels.
#pragma once
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/activations.h"
#include "kernels/vector_exp.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

// y = f(x) a vector at a time; the tail is padded into one more vector.
template <class V, class F> void map_vectors(const float* x, float* y, int64_t n, F f)
{
    constexpr int W = V::width;
    int64_t i = 0;
    for (; i + W <= n; i += W) V::store(y + i, f(V::load(x + i)));
    if (i == n) return;
    float lanes[W] = {};
    std::memcpy(lanes, x + i, sizeof(float) * static_cast<size_t>(n - i));
    V::store(lanes, f(V::load(lanes)));
    std::memcpy(y + i, lanes, sizeof(float) * static_cast<size_t>(n - i));
}

template <class V>
void lrn_across_channels(const float* const* planes, int count, const float* x, float bias, float alpha, float* y,
                         int64_t n)
{
    using vec = typename V::vec;
    constexpr int W = V::width;
    const vec one = V::set1(1.f), b = V::set1(bias), a = V::set1(alpha);
    // The W values from index i; load(p) reads W floats of plane or x from there.
    const auto values = [&](auto load, int64_t i) {
        vec sum = V::set1(0.f);
        for (int k = 0; k < count; ++k) {
            const vec v = load(planes[k] + i);
            sum = V::fmadd(v, v, sum);
        }
        const vec root = V::sqrt(V::fmadd(a, sum, b));
        return load(x + i) * (one / (root * V::sqrt(root)));
    };
    int64_t i = 0;
    for (; i + W <= n; i += W) V::store(y + i, values([](const float* p) { return V::load(p); }, i));
    if (i == n) return;
    // The tail through padded vectors: the same code for every value.
    const size_t tail = static_cast<size_t>(n - i);
    const auto padded = [tail](const float* p) {
        float lanes[V::width] = {};
        std::memcpy(lanes, p, sizeof(float) * tail);
        return V::load(lanes);
    };
    float out[W];
    V::store(out, values(padded, i));
    std::memcpy(y + i, out, sizeof(float) * tail);
}

template <class V> void map_exp_activation(ExpActivation f, const float* x, float* y, int64_t n)
{
    using vec = typename V::vec;
    using M = VectorMask<V>;
    const vec one = V::set1(1.f), two = V::set1(2.f);
    // 1 / (1 + e^-z) through e = e^-|z|, which never overflows: 1 / (1 + e)
    // for z >= 0 and e / (1 + e) below. x * sigmoid(x) stays exact down to
    // x = -103, where x / (1 + e^-x) would divide by infinity from -88.7 on.
    const auto sigmoid = [&](vec z) {
        const vec e = exp_vec<V>(-M::abs(z));
        return M::select(z < V::set1(0.f), e, one) / (one + e);
    };
    switch (f) {
    case ExpActivation::Exp: return map_vectors<V>(x, y, n, [](vec v) { return exp_vec<V>(v); });
    case ExpActivation::Sigmoid:
        return map_vectors<V>(x, y, n, [&](vec v) {
            return one / (one + exp_vec<V>(-M::clamp(v, -88.3762626647949f, 88.3762626647949f)));
        });
    case ExpActivation::Swish: return map_vectors<V>(x, y, n, [&](vec v) { return v * sigmoid(v); });
    case ExpActivation::GeluTanh:
        return map_vectors<V>(x, y, n, [&](vec v) {
            return v * sigmoid(v * (V::set1(1.59576912f) + V::set1(0.0713548162f) * v * v));
        });
    case ExpActivation::Mish:
        // Past x = 20, t / (t + 2) is 1 in float; the clamp keeps t finite.
        return map_vectors<V>(x, y, n, [&](vec v) {
            const vec e = exp_vec<V>(M::clamp(v, -std::numeric_limits<float>::infinity(), 20.f));
            const vec t = e * (e + two);
            return v * (t / (t + two));
        });
    }
}

// The piecewise activations with the scalar forms' comparisons and rounding
// (Activation::eval in ops/activation/activation.h), so the same bits.
template <class V>
void map_piecewise_activation(PiecewiseActivation f, float a, float b, const float* x, float* y, int64_t n)
{
    using vec = typename V::vec;
    const vec va = V::set1(a), vb = V::set1(b), zero = V::set1(0.f);
    switch (f) {
    case PiecewiseActivation::LeakyReLU:
        return map_vectors<V>(x, y, n, [&](vec v) { return v > zero ? v : v * va; });
    case PiecewiseActivation::Clip:
        return map_vectors<V>(x, y, n, [&](vec v) {
            const vec low = v < va ? va : v;
            return vb < low ? vb : low;
        });
    case PiecewiseActivation::HardSwish: {
        const vec lower = V::set1(-b / a), upper = V::set1((1.f - b) / a);
        return map_vectors<V>(x, y, n, [&](vec v) {
            const vec inside = v * (rounded(v * va) + vb);
            const vec above = v > upper ? v : inside;
            return v < lower ? zero : above;
        });
    }
    }
}

} // namespace
} // namespace kestrel::detail
