// The half-float dot products (half_dot.h), written once for every ISA: a file
// under kernels/<isa>/ instantiates half_dot_rows<VectorOf<width>, Halves>,
// where Halves::load(p) widens V::width halves from p to a vector of floats.
#pragma once
#include <cstdint>

#include "kernels/half_dot.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

template <class V, class Halves>
void half_dot_rows(const uint16_t* w, const float* x, int64_t n, int64_t rows, float* y)
{
    using vec = typename V::vec;
    constexpr int64_t W = V::width;
    constexpr int kAcc = 4; // independent chains: a multiply-add per cycle despite its latency
    for (int64_t o = 0; o < rows; ++o) {
        const uint16_t* wr = w + o * n;
        vec acc[kAcc];
        for (int j = 0; j < kAcc; ++j) acc[j] = V::set1(0.f);
        int64_t i = 0;
        for (; i + kAcc * W <= n; i += kAcc * W)
            for (int j = 0; j < kAcc; ++j)
                acc[j] = V::fmadd(Halves::load(wr + i + j * W), V::load(x + i + j * W), acc[j]);
        for (; i + W <= n; i += W) acc[0] = V::fmadd(Halves::load(wr + i), V::load(x + i), acc[0]);
        vec total = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        float lanes[W];
        V::store(lanes, total);
        float sum = 0.f;
        for (int64_t j = 0; j < W; ++j) sum += lanes[j];
        for (; i < n; ++i) sum += Halves::one(wr[i]) * x[i];
        y[o] = sum;
    }
}

} // namespace
} // namespace kestrel::detail
