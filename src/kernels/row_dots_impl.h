// The row dot products (row_dots.h), written once for every ISA and weight
// type: a file under kernels/<isa>/ instantiates row_dots<VectorOf<width>,
// Weights> with Weights = FloatWeights<V> or its ISA's half-float loader
// (Weights::load(p) gives V::width weights from p as a vector of floats,
// Weights::one(w) one weight as a float).
#pragma once
#include <cstdint>

#include "kernels/row_dots.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

template <class V> struct FloatWeights {
    static float one(float w) { return w; }
    static typename V::vec load(const float* p) { return V::load(p); }
};

template <class V, class Weights, class T>
void row_dots(const T* w, const float* x, int64_t n, int64_t rows, float* y)
{
    using vec = typename V::vec;
    constexpr int64_t W = V::width;
    constexpr int kAcc = 4; // independent chains: a multiply-add per cycle despite its latency
    // The weights are one long stream read once: prefetching a few KB ahead
    // keeps more of it in flight than the hardware prefetcher alone.
    constexpr int64_t kAhead = 2048 / sizeof(T);
    for (int64_t o = 0; o < rows; ++o) {
        const T* wr = w + o * n;
        vec acc[kAcc];
        for (int j = 0; j < kAcc; ++j) acc[j] = V::set1(0.f);
        int64_t i = 0;
        for (; i + kAcc * W <= n; i += kAcc * W) {
            __builtin_prefetch(wr + i + kAhead);
            for (int j = 0; j < kAcc; ++j)
                acc[j] = V::fmadd(Weights::load(wr + i + j * W), V::load(x + i + j * W), acc[j]);
        }
        for (; i + W <= n; i += W) acc[0] = V::fmadd(Weights::load(wr + i), V::load(x + i), acc[0]);
        vec total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        float lanes[W];
        V::store(lanes, total);
        float sum = 0.f;
        for (int64_t j = 0; j < W; ++j) sum += lanes[j];
        for (; i < n; ++i) sum += Weights::one(wr[i]) * x[i];
        y[o] = sum;
    }
}

} // namespace
} // namespace kestrel::detail
