// The 1x1 convolution on channel blocks (pointwise_conv_blocked.h), written
// once for every ISA: a file under kernels/<isa>/ instantiates
// pointwise_blocked<VectorOf<width>, M, N> with its register tile.
//
// A tile is N pixels x M output blocks of accumulators (M * N vectors kept in
// registers), started from the bias. For each input channel in order it loads
// the M weight vectors once and broadcasts the channel's value at each of the
// N pixels: M * N multiply-adds for M + N loads, the loads being what limits a
// smaller tile. Pixel ranges are cut into tiles of nearly equal sizes (49
// pixels as 10+10+10+10+9, not 4x12+1): a tile of very few pixels has too few
// independent chains to hide the multiply-add latency.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/pointwise_conv_blocked.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

using PointwiseTileFn = void (*)(const PointwiseProblem& pr, int64_t ob, int64_t p);

// The tile's sums into the blocked output: each (block, pixel) one vector.
// (Both stores always inlined: a call would take the accumulators from
// memory, and Clang then kept them there through the whole channel loop,
// 2.5x slower.)
template <class V, int M, int N>
__attribute__((always_inline)) inline void store_tile_blocked(const PointwiseProblem& pr, int64_t ob, int64_t p,
                                                              const typename V::vec (&acc)[M][N])
{
    constexpr int64_t B = V::width;
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m)
#pragma GCC unroll 32
        for (int j = 0; j < N; ++j) V::store(pr.y + ((ob + m) * pr.pixels + p + j) * B, acc[m][j]);
}

// The tile's sums into output planes: through a small [pixel][channel]
// buffer, then each real channel's N pixels as a row of its plane (the
// padding channels have no plane).
template <class V, int M, int N>
__attribute__((always_inline)) inline void store_tile_planes(const PointwiseProblem& pr, int64_t ob, int64_t p,
                                                             const typename V::vec (&acc)[M][N])
{
    constexpr int64_t B = V::width;
    float t[M][N][B];
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m)
#pragma GCC unroll 32
        for (int j = 0; j < N; ++j) V::store(t[m][j], acc[m][j]);
    for (int m = 0; m < M; ++m) {
        const int64_t first = (ob + m) * B, lanes = std::min(B, pr.out_ch - first);
        for (int64_t l = 0; l < lanes; ++l) {
            float* row = pr.y + (first + l) * pr.pixels + p;
            for (int j = 0; j < N; ++j) row[j] = t[m][j][l];
        }
    }
}

// The distance between a channel's values at consecutive pixels: B blocked,
// 1 in planes. The blocked one is hidden from the compiler: knowing it, GCC
// 12's SLP vectorizer takes the tile's N broadcast values (B apart) as one
// strided group and loads each as a whole vector, then broadcasts its first
// lane with a shuffle on port 5, the second 512-bit FMA port (1.5x slower
// than a broadcast straight from memory).
template <int64_t B, bool XBlocked> inline int64_t pixel_stride_of()
{
    int64_t step = XBlocked ? B : 1;
    if constexpr (XBlocked) asm("" : "+r"(step));
    return step;
}

// N pixels from p x M output blocks from ob. x[c][p + j] is at
// xs[j * pixel_stride], xs being channel c's value at pixel p; the channels of
// an input block are lane_step apart, and the blocks B * P apart in both
// layouts. Only channels < in_ch are read (never the input's padding lanes).
template <class V, int M, int N, bool XBlocked, bool YBlocked>
void pointwise_tile(const PointwiseProblem& pr, int64_t ob, int64_t p)
{
    constexpr int64_t B = V::width;
    const int64_t pixel_stride = pixel_stride_of<B, XBlocked>();
    using vec = typename V::vec;
    const int64_t in_ch = pr.in_ch, lane_step = XBlocked ? 1 : pr.pixels, block_step = B * pr.pixels;
    const float* w[M];
    vec acc[M][N];
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) {
        w[m] = pr.packed + (ob + m) * in_ch * B;
        const vec b = V::load(pr.bias + (ob + m) * B);
#pragma GCC unroll 32
        for (int j = 0; j < N; ++j) acc[m][j] = b;
    }
    const float* xb = pr.x + p * pixel_stride;
    for (int64_t c0 = 0; c0 < in_ch; c0 += B, xb += block_step) {
        const int64_t lanes = std::min(B, in_ch - c0);
        const float* xs = xb;
        for (int64_t l = 0; l < lanes; ++l, xs += lane_step) {
            vec wv[M];
#pragma GCC unroll 4
            for (int m = 0; m < M; ++m) wv[m] = V::load(w[m] + (c0 + l) * B);
#pragma GCC unroll 32
            for (int j = 0; j < N; ++j) {
                const vec xv = V::set1(xs[j * pixel_stride]);
#pragma GCC unroll 4
                for (int m = 0; m < M; ++m) acc[m][j] = V::fmadd(wv[m], xv, acc[m][j]);
            }
        }
    }
    if (pr.clamp) clamp_tile<V>(acc, pr.clamp);
    if constexpr (YBlocked)
        store_tile_blocked<V, M, N>(pr, ob, p, acc);
    else
        store_tile_planes<V, M, N>(pr, ob, p, acc);
}

// The tiles of 1..sizeof(I) pixels: table[n - 1] takes n.
template <class V, int M, bool XBlocked, bool YBlocked, size_t... I>
constexpr std::array<PointwiseTileFn, sizeof...(I)> pointwise_tiles(std::index_sequence<I...>)
{
    return {pointwise_tile<V, M, static_cast<int>(I) + 1, XBlocked, YBlocked>...};
}

// Pixels [p0, p1) of the blocks from ob, in tiles of at most N pixels whose
// sizes differ by at most one.
inline void pointwise_pixels(const PointwiseTileFn* table, int64_t n_max, const PointwiseProblem& pr, int64_t ob,
                             int64_t p0, int64_t p1)
{
    const int64_t n = p1 - p0, tiles = (n + n_max - 1) / n_max;
    for (int64_t t = 0; t < tiles; ++t) {
        const int64_t a = p0 + t * n / tiles, b = p0 + (t + 1) * n / tiles;
        table[b - a - 1](pr, ob, a);
    }
}

// M blocks at a time (the last ones one at a time), each over the pixel range:
// the blocks' weight panels stay in cache while the input streams past them.
template <class V, int M, int N, bool XBlocked, bool YBlocked>
void pointwise_layout(const PointwiseProblem& pr, int64_t ob0, int64_t ob1, int64_t p0, int64_t p1)
{
    static constexpr auto wide = pointwise_tiles<V, M, XBlocked, YBlocked>(std::make_index_sequence<N>{});
    static constexpr auto narrow = pointwise_tiles<V, 1, XBlocked, YBlocked>(std::make_index_sequence<N>{});
    if (p1 <= p0) return;
    int64_t ob = ob0;
    for (; ob + M <= ob1; ob += M) pointwise_pixels(wide.data(), N, pr, ob, p0, p1);
    for (; ob < ob1; ++ob) pointwise_pixels(narrow.data(), N, pr, ob, p0, p1);
}

// PointwiseBlockedKernel::run with a register tile of N pixels x M output blocks.
template <class V, int M, int N>
void pointwise_blocked(const PointwiseProblem& pr, int64_t ob0, int64_t ob1, int64_t p0, int64_t p1)
{
    if (pr.x_blocked)
        (pr.y_blocked ? pointwise_layout<V, M, N, true, true> : pointwise_layout<V, M, N, true, false>)(pr, ob0, ob1,
                                                                                                         p0, p1);
    else
        (pr.y_blocked ? pointwise_layout<V, M, N, false, true> : pointwise_layout<V, M, N, false, false>)(pr, ob0, ob1,
                                                                                                           p0, p1);
}

} // namespace
} // namespace kestrel::detail
