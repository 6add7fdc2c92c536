// The row dot products (row_dots.h), written once for every ISA and weight
// type: a file under kernels/<isa>/ instantiates row_dots<VectorOf<width>,
// Weights> with Weights = FloatWeights<V>, Bf16Weights<V> or its ISA's half-float loader
// (Weights::load(p) gives V::width weights from p as a vector of floats,
// Weights::one(w) one weight as a float).
#pragma once
#include <cstdint>
#include <cstring>

#include "kernels/row_dots.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

template <class V> struct FloatWeights {
    static float one(float w) { return w; }
    static typename V::vec load(const float* p) { return V::load(p); }
};

// W 16-bit and 32-bit lanes (member typedefs: GCC takes a dependent vector
// size there, not in a function template's body).
template <int W> struct Bf16Lanes {
    typedef uint16_t halves __attribute__((vector_size(2 * W)));
    typedef uint32_t words __attribute__((vector_size(4 * W)));
};

// bfloat16 weights: a weight's bits are the upper half of a float's.
template <class V> struct Bf16Weights {
    static float one(uint16_t b)
    {
        const uint32_t bits = uint32_t(b) << 16;
        float f;
        std::memcpy(&f, &bits, sizeof f);
        return f;
    }
    static typename V::vec load(const uint16_t* p)
    {
        using Halves = typename Bf16Lanes<V::width>::halves;
        using Words = typename Bf16Lanes<V::width>::words;
        Halves h;
        std::memcpy(&h, p, sizeof h);
        const Words w = __builtin_convertvector(h, Words) << 16;
        typename V::vec v;
        std::memcpy(&v, &w, sizeof v);
        return v;
    }
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
