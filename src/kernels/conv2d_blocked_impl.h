// The direct convolution on channel blocks (conv2d_blocked.h), written once
// for every ISA: a file under kernels/<isa>/ instantiates
// conv2d_blocked<VectorOf<width>, M, N, N2> with its register tiles.
//
// A tile is R output rows x C pixels x M output blocks of accumulators
// (M * R * C vectors kept in registers), started from the bias. For each
// input channel and kernel tap in order it loads the M weight vectors once and
// broadcasts the input value under each of the R * C pixels: M * R * C
// multiply-adds for M + R * C loads, the loads (of weights streamed from L2
// once per tile) being what limits a smaller tile. A row's values are a fixed
// distance apart (the column stride), so a pointer per row and constant
// offsets reach them all. Tiles take two rows at once where whole row pairs
// allow (narrow planes: 7 or 14 pixels wide would otherwise make small tiles),
// one row elsewhere (and for 1x1 layers, one long row). A row's pixels are cut
// into tiles of nearly equal sizes (49 pixels as 10+10+10+10+9, not 4x12+1): a
// tile of very few pixels has too few independent chains to hide the
// multiply-add latency.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/conv2d_blocked.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

// A tile of pixels from (oy, ox) along the row (and the next one), blocks from ob.
using ConvTileFn = void (*)(const Conv2dBlockedProblem& pr, int64_t ob, int64_t oy, int64_t ox);

// The tile's sums into the blocked output: each (block, pixel) one vector.
// (Both stores always inlined: a call would take the accumulators from
// memory, and Clang then kept them there through the whole channel loop,
// 2.5x slower.)
template <class V, int M, int R, int C>
__attribute__((always_inline)) inline void store_tile_blocked(const Conv2dBlockedProblem& pr, int64_t ob, int64_t p,
                                                              const typename V::vec (&acc)[M][R * C])
{
    constexpr int64_t B = V::width;
    const int64_t pixels = pr.out_pixels();
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m)
#pragma GCC unroll 32
        for (int j = 0; j < R * C; ++j)
            V::store(pr.y + ((ob + m) * pixels + p + j / C * pr.out_w + j % C) * B, acc[m][j]);
}

// The tile's sums into output planes: per output block and row, B pixels at
// a time transposed in registers (pixel vectors of B channels into channel
// vectors of B pixels), each real channel's pixels stored as a piece of its
// plane's row (the padding channels have no plane). Only the tile's pixels
// are written: another thread may own the next ones.
template <class V, int M, int R, int C>
__attribute__((always_inline)) inline void store_tile_planes(const Conv2dBlockedProblem& pr, int64_t ob, int64_t p,
                                                             const typename V::vec (&acc)[M][R * C])
{
    constexpr int B = V::width;
    const int64_t pixels = pr.out_pixels();
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) {
        const int64_t first = (ob + m) * B, lanes = std::min<int64_t>(B, pr.out_ch - first);
        float* plane = pr.y + first * pixels + p;
#pragma GCC unroll 2
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
            for (int c0 = 0; c0 < C; c0 += B) {
                typename V::vec t[B];
#pragma GCC unroll 64
                for (int i = 0; i < B; ++i) t[i] = c0 + i < C ? acc[m][r * C + c0 + i] : V::set1(0.f);
                transpose_square<V>(t);
                const int n = std::min(B, C - c0);
                float* at = plane + r * pr.out_w + c0;
                for (int64_t l = 0; l < lanes; ++l) std::memcpy(at + l * pixels, &t[l], sizeof(float) * n);
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

// C pixels from column ox of output rows oy..oy+R-1 x M output blocks from
// ob. The input value under output pixel (r, j) for channel c and tap
// (ky, kx) is at xs[r * out_row_step + j * col_step], xs being the one under
// pixel (0, 0); the channels of an input block are lane_step apart, and the
// blocks B * plane apart in both layouts.
// The weights are read in the order they are packed: one vector per output
// block for each (channel block, tap, channel). Only channels < in_ch are
// read (never the input's padding lanes).
template <class V, int M, int R, int C, bool XBlocked, bool YBlocked>
void conv_tile(const Conv2dBlockedProblem& pr, int64_t ob, int64_t oy, int64_t ox)
{
    constexpr int N = R * C;
    constexpr int64_t B = V::width;
    const int64_t pixel = pixel_stride_of<B, XBlocked>(), col_step = pixel * pr.stride_w;
    using vec = typename V::vec;
    const int64_t in_ch = pr.in_ch, plane = pr.in_h * pr.in_w, lane_step = XBlocked ? 1 : plane;
    const int64_t block_step = B * plane, row_step = pr.in_w * pixel;
    const int64_t tap_row = pr.dilation_h * row_step, tap_col = pr.dilation_w * pixel;
    const int64_t out_row_step = pr.stride_h * row_step;
    const float* w[M];
    vec acc[M][N];
#pragma GCC unroll 4
    for (int m = 0; m < M; ++m) {
        w[m] = pr.packed + (ob + m) * in_ch * pr.taps() * B;
        const vec b = V::load(pr.bias + (ob + m) * B);
#pragma GCC unroll 32
        for (int j = 0; j < N; ++j) acc[m][j] = b;
    }
    const float* xb = pr.x + oy * pr.stride_h * row_step + ox * col_step;
    int64_t k = 0; // weight vectors read so far, per output block
    for (int64_t c0 = 0; c0 < in_ch; c0 += B, xb += block_step) {
        const int64_t lanes = std::min(B, in_ch - c0);
        for (int64_t ky = 0; ky < pr.kh; ++ky)
            for (int64_t kx = 0; kx < pr.kw; ++kx) {
                const float* xs = xb + ky * tap_row + kx * tap_col;
                for (int64_t l = 0; l < lanes; ++l, xs += lane_step, ++k) {
                    vec wv[M];
#pragma GCC unroll 4
                    for (int m = 0; m < M; ++m) wv[m] = V::load(w[m] + k * B);
#pragma GCC unroll 32
                    for (int j = 0; j < N; ++j) {
                        const vec xv = V::set1(xs[j / C * out_row_step + j % C * col_step]);
#pragma GCC unroll 4
                        for (int m = 0; m < M; ++m) acc[m][j] = V::fmadd(wv[m], xv, acc[m][j]);
                    }
                }
            }
    }
    if (pr.clamp) clamp_tile<V>(acc, pr.clamp);
    const int64_t p = oy * pr.out_w + ox;
    if constexpr (YBlocked)
        store_tile_blocked<V, M, R, C>(pr, ob, p, acc);
    else
        store_tile_planes<V, M, R, C>(pr, ob, p, acc);
}

// The tiles of R rows x 1..sizeof(I) pixels: table[n - 1] takes n.
template <class V, int M, int R, bool XBlocked, bool YBlocked, size_t... I>
constexpr std::array<ConvTileFn, sizeof...(I)> conv_tiles(std::index_sequence<I...>)
{
    return {conv_tile<V, M, R, static_cast<int>(I) + 1, XBlocked, YBlocked>...};
}

// One output block group's tiles: of one row (up to `one` pixels) and of two
// rows (up to `two` pixels each).
struct TileTables {
    const ConvTileFn* one;
    int64_t one_max;
    const ConvTileFn* two;
    int64_t two_max;
};

// Pixels [a, b) of row oy from `table`'s tiles of at most n_max pixels, of
// sizes that differ by at most one.
inline void row_tiles(const ConvTileFn* table, int64_t n_max, const Conv2dBlockedProblem& pr, int64_t ob,
                      int64_t oy, int64_t a, int64_t b)
{
    const int64_t n = b - a, tiles = (n + n_max - 1) / n_max;
    for (int64_t t = 0; t < tiles; ++t) table[(t + 1) * n / tiles - t * n / tiles - 1](pr, ob, oy, a + t * n / tiles);
}

// Pixels [p0, p1) of the blocks from ob: whole row pairs in two-row tiles,
// the rest row by row.
inline void conv_pixels(const TileTables& tables, const Conv2dBlockedProblem& pr, int64_t ob, int64_t p0,
                        int64_t p1)
{
    const int64_t w = pr.out_w;
    for (int64_t p = p0; p < p1;) {
        const int64_t oy = p / w, ox = p % w;
        if (ox == 0 && p + 2 * w <= p1) {
            row_tiles(tables.two, tables.two_max, pr, ob, oy, 0, w);
            p += 2 * w;
            continue;
        }
        const int64_t n = std::min(p1 - p, w - ox);
        row_tiles(tables.one, tables.one_max, pr, ob, oy, ox, ox + n);
        p += n;
    }
}

// M blocks at a time (the last ones one at a time), each over the pixel range:
// the blocks' weight panels stay in cache while the input streams past them.
template <class V, int M, int N, int N2, bool XBlocked, bool YBlocked>
void conv_layout(const Conv2dBlockedProblem& pr, int64_t ob0, int64_t ob1, int64_t p0, int64_t p1)
{
    static constexpr auto wide = conv_tiles<V, M, 1, XBlocked, YBlocked>(std::make_index_sequence<N>{});
    static constexpr auto wide2 = conv_tiles<V, M, 2, XBlocked, YBlocked>(std::make_index_sequence<N2>{});
    static constexpr auto narrow = conv_tiles<V, 1, 1, XBlocked, YBlocked>(std::make_index_sequence<N>{});
    static constexpr auto narrow2 = conv_tiles<V, 1, 2, XBlocked, YBlocked>(std::make_index_sequence<N2>{});
    if (p1 <= p0) return;
    int64_t ob = ob0;
    for (; ob + M <= ob1; ob += M) conv_pixels({wide.data(), N, wide2.data(), N2}, pr, ob, p0, p1);
    for (; ob < ob1; ++ob) conv_pixels({narrow.data(), N, narrow2.data(), N2}, pr, ob, p0, p1);
}

// Conv2dBlockedKernel::run with register tiles of M output blocks x N pixels
// of one row, or x 2 rows of N2 pixels.
template <class V, int M, int N, int N2>
void conv2d_blocked(const Conv2dBlockedProblem& pr, int64_t ob0, int64_t ob1, int64_t p0, int64_t p1)
{
    if (pr.x_blocked)
        (pr.y_blocked ? conv_layout<V, M, N, N2, true, true>
                      : conv_layout<V, M, N, N2, true, false>)(pr, ob0, ob1, p0, p1);
    else
        (pr.y_blocked ? conv_layout<V, M, N, N2, false, true>
                      : conv_layout<V, M, N, N2, false, false>)(pr, ob0, ob1, p0, p1);
}

} // namespace
} // namespace kestrel::detail
