// The Winograd tile transforms (see conv2d_winograd.h), written once for every
// ISA: a file under kernels/<isa>/ instantiates them with VectorOf<width>
// (vector_of.h), one tile per lane. The matrices are compile-time tables
// (winograd_tables.h); with the loops unrolled, a zero coefficient costs
// nothing and a coefficient of +-1 no multiply.
#pragma once
#include <cstdint>

#include "kernels/conv2d_winograd.h"
#include "kernels/vector_of.h"
#include "kernels/winograd_tables.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

// sum_k w[k] * x(k) over the nonzero w[k].
template <class V, int K, class X>
__attribute__((always_inline)) inline typename V::vec weighted_sum(const float (&w)[K], X x)
{
    typename V::vec s{};
    bool first = true;
#pragma GCC unroll 8
    for (int k = 0; k < K; ++k) {
        if (w[k] == 0.f) continue;
        const typename V::vec term = w[k] == 1.f ? x(k) : w[k] == -1.f ? -x(k) : V::set1(w[k]) * x(k);
        s = first ? term : s + term;
        first = false;
    }
    return s;
}

// d[r][c][lane] = the patch of tile tile0 + lane: plane[y0 + r][x0 + c], 0
// outside the plane and for tiles past the last.
template <class T, int W>
void gather_patches(const WinogradGeometry& g, const float* plane, int64_t tile0, float (&d)[T::alpha][T::alpha][W])
{
    constexpr int A = T::alpha;
    const int64_t tiles = g.tiles(), tiles_w = g.tiles_w();
    int64_t ty = tile0 / tiles_w, tx = tile0 % tiles_w;
    for (int l = 0; l < W; ++l, ++tx) {
        if (tx == tiles_w) tx = 0, ++ty;
        const int64_t y0 = ty * T::m, x0 = tx * T::m;
        const float* src = plane + y0 * g.in_w + x0;
        if (tile0 + l < tiles && y0 + A <= g.in_h && x0 + A <= g.in_w) {
            for (int r = 0; r < A; ++r)
                for (int c = 0; c < A; ++c) d[r][c][l] = src[r * g.in_w + c];
            continue;
        }
        const bool tile = tile0 + l < tiles;
        for (int r = 0; r < A; ++r)
            for (int c = 0; c < A; ++c)
                d[r][c][l] = tile && y0 + r < g.in_h && x0 + c < g.in_w ? src[r * g.in_w + c] : 0.f;
    }
}

template <class V, class T>
void winograd_input_tiles(const WinogradGeometry& g, const float* plane, int64_t tile0, float* dst, int64_t xi_stride)
{
    using vec = typename V::vec;
    constexpr int A = T::alpha, W = V::width;
    float d[A][A][W];
    gather_patches<T, W>(g, plane, tile0, d);
    vec t[A][A]; // BT d: the patch's columns transformed
#pragma GCC unroll 8
    for (int i = 0; i < A; ++i)
#pragma GCC unroll 8
        for (int c = 0; c < A; ++c) t[i][c] = weighted_sum<V>(T::BT[i], [&](int k) { return V::load(d[k][c]); });
#pragma GCC unroll 8
    for (int i = 0; i < A; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < A; ++j)
            V::store(dst + (i * A + j) * xi_stride, weighted_sum<V>(T::BT[j], [&](int k) { return t[i][k]; }));
}

template <class V, class T>
void winograd_output_tiles(const WinogradGeometry&, const float* src, int64_t xi_stride, float bias, float* out)
{
    using vec = typename V::vec;
    constexpr int A = T::alpha, M = T::m, W = V::width;
    vec t[M][A]; // AT M: the columns transformed
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r)
#pragma GCC unroll 8
        for (int j = 0; j < A; ++j)
            t[r][j] = weighted_sum<V>(T::AT[r], [&](int k) { return V::load(src + (k * A + j) * xi_stride); });
    const vec b = V::set1(bias);
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < M; ++c)
            V::store(out + (r * M + c) * W, weighted_sum<V>(T::AT[c], [&](int k) { return t[r][k]; }) + b);
}

template <class V>
void winograd_input(const WinogradGeometry& g, const float* plane, int64_t tile0, float* dst, int64_t xi_stride)
{
    if (g.m == 6)
        winograd_input_tiles<V, winograd::F63>(g, plane, tile0, dst, xi_stride);
    else
        winograd_input_tiles<V, winograd::F43>(g, plane, tile0, dst, xi_stride);
}

template <class V>
void winograd_output(const WinogradGeometry& g, const float* src, int64_t xi_stride, float bias, float* out)
{
    if (g.m == 6)
        winograd_output_tiles<V, winograd::F63>(g, src, xi_stride, bias, out);
    else
        winograd_output_tiles<V, winograd::F43>(g, src, xi_stride, bias, out);
}

} // namespace
} // namespace kestrel::detail
