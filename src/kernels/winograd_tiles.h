// The Winograd tile transforms (see conv2d_winograd.h), written once for every
// ISA: a file under kernels/<isa>/ instantiates them with VectorOf<width>
// (vector_of.h), one tile per lane. The matrices are compile-time tables
// (winograd_tables.h); with the loops unrolled, a zero coefficient costs
// nothing and a coefficient of +-1 no multiply.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

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

// V = BT d B for a patch d of alpha x alpha vectors: point xi = row * alpha +
// column stored at dst + xi * xi_stride.
template <class V, class T>
__attribute__((always_inline)) inline void input_transform(const typename V::vec (&d)[T::alpha][T::alpha], float* dst,
                                                           int64_t xi_stride)
{
    constexpr int A = T::alpha;
    typename V::vec t[A][A]; // BT d: the patch's columns transformed
#pragma GCC unroll 8
    for (int i = 0; i < A; ++i)
#pragma GCC unroll 8
        for (int c = 0; c < A; ++c) t[i][c] = weighted_sum<V>(T::BT[i], [&](int k) { return d[k][c]; });
#pragma GCC unroll 8
    for (int i = 0; i < A; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < A; ++j)
            V::store(dst + (i * A + j) * xi_stride, weighted_sum<V>(T::BT[j], [&](int k) { return t[i][k]; }));
}

// Y = AT M A + bias for M[xi] = V::load(src + xi * xi_stride): each row r of
// Y (m vectors) handed to emit(r, row).
template <class V, class T, class Emit>
__attribute__((always_inline)) inline void output_transform(const float* src, int64_t xi_stride,
                                                            typename V::vec bias, Emit emit)
{
    using vec = typename V::vec;
    constexpr int A = T::alpha, M = T::m;
    vec t[M][A]; // AT M: the columns transformed
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r)
#pragma GCC unroll 8
        for (int j = 0; j < A; ++j)
            t[r][j] = weighted_sum<V>(T::AT[r], [&](int k) { return V::load(src + (k * A + j) * xi_stride); });
#pragma GCC unroll 8
    for (int r = 0; r < M; ++r) {
        vec row[1][M];
#pragma GCC unroll 8
        for (int c = 0; c < M; ++c) row[0][c] = weighted_sum<V>(T::AT[c], [&](int k) { return t[r][k]; }) + bias;
        emit(r, row);
    }
}

// Where each lane's patch lies (tile tile0 + lane): rows[lane] + r * stride[lane]
// is patch row r, C >= alpha columns of it readable. In the plane where the
// patch and the extra columns lie inside it; else (the plane's last tiles,
// tiles past the last) a copy in `spill`, 0 outside the plane.
template <class T, int W, int C>
void locate_patches(const WinogradGeometry& g, const float* plane, int64_t tile0, const float* (&rows)[W],
                    int64_t (&stride)[W], float (&spill)[W][T::alpha][C])
{
    constexpr int A = T::alpha;
    const int64_t tiles = g.tiles(), tiles_w = g.tiles_w();
    int64_t ty = tile0 / tiles_w, tx = tile0 % tiles_w;
    for (int l = 0; l < W; ++l, ++tx) {
        if (tx == tiles_w) tx = 0, ++ty;
        const int64_t y0 = ty * T::m, x0 = tx * T::m;
        const float* src = plane + y0 * g.in_w + x0;
        const bool tile = tile0 + l < tiles;
        if (tile && y0 + A <= g.in_h && x0 + C <= g.in_w) {
            rows[l] = src, stride[l] = g.in_w;
            continue;
        }
        for (int r = 0; r < A; ++r)
            for (int c = 0; c < C; ++c)
                spill[l][r][c] = tile && y0 + r < g.in_h && x0 + c < g.in_w ? src[r * g.in_w + c] : 0.f;
        rows[l] = &spill[l][0][0], stride[l] = C;
    }
}

// Patch row r of every lane as vectors, d[c] lane l = column c of lane l's
// patch: Q (<= 8) columns of Q lanes loaded as Q vectors and transposed in
// registers, W / Q such squares side by side (no value-by-value gather).
template <class V, int A, int Q, int C>
__attribute__((always_inline)) inline void patch_row(const float* const (&rows)[V::width],
                                                     const int64_t (&stride)[V::width], int r, typename V::vec (&d)[A])
{
    constexpr int W = V::width, G = W / Q;
    static_assert(G == 1 || G == 2, "a vector holds one or two squares");
    using S = VectorOf<Q>;
#pragma GCC unroll 2
    for (int c0 = 0; c0 < C; c0 += Q) {
        typename S::vec part[G][Q];
#pragma GCC unroll 2
        for (int grp = 0; grp < G; ++grp) {
#pragma GCC unroll 8
            for (int i = 0; i < Q; ++i) {
                const int l = grp * Q + i;
                part[grp][i] = S::load(rows[l] + r * stride[l] + c0);
            }
            transpose_square<S>(part[grp]);
        }
#pragma GCC unroll 8
        for (int c = 0; c < Q; ++c) {
            if (c0 + c >= A) break; // the extra columns of the last square
            if constexpr (G == 1)
                d[c0 + c] = part[0][c];
            else
                d[c0 + c] = joined(part[0][c], part[1][c], std::make_index_sequence<W>{});
        }
    }
}

template <class V, class T>
void winograd_input_tiles(const WinogradGeometry& g, const float* plane, int64_t tile0, float* dst, int64_t xi_stride)
{
    using vec = typename V::vec;
    constexpr int A = T::alpha, W = V::width, Q = W < 8 ? W : 8, C = (A + Q - 1) / Q * Q;
    const float* rows[W];
    int64_t stride[W];
    float spill[W][A][C];
    locate_patches<T, W, C>(g, plane, tile0, rows, stride, spill);
    vec d[A][A];
#pragma GCC unroll 8
    for (int r = 0; r < A; ++r) patch_row<V, A, Q, C>(rows, stride, r, d[r]);
    input_transform<V, T>(d, dst, xi_stride);
}

// The inverse of patch_row: C (a multiple of Q) vectors o[c], lane l = column c of
// lane l's row, stored as out[l * lane_stride + c], Q columns of Q lanes transposed in
// registers at a time.
template <class V, int Q, int C>
__attribute__((always_inline)) inline void store_lane_rows(const typename V::vec (&o)[C], float* out,
                                                           int64_t lane_stride)
{
    constexpr int W = V::width, G = W / Q;
    static_assert(G == 1 || G == 2, "a vector holds one or two squares");
    using S = VectorOf<Q>;
    const auto square = [&](auto group, int c0) {
        constexpr int grp = decltype(group)::value;
        typename S::vec part[Q];
#pragma GCC unroll 8
        for (int i = 0; i < Q; ++i) {
            if constexpr (G == 1)
                part[i] = o[c0 + i];
            else
                part[i] = lanes_from<grp * Q>(o[c0 + i], std::make_index_sequence<Q>{});
        }
        transpose_square<S>(part);
#pragma GCC unroll 8
        for (int i = 0; i < Q; ++i) S::store(out + (grp * Q + i) * lane_stride + c0, part[i]);
    };
#pragma GCC unroll 2
    for (int c0 = 0; c0 < C; c0 += Q) {
        square(std::integral_constant<int, 0>{}, c0);
        if constexpr (G == 2) square(std::integral_constant<int, 1>{}, c0);
    }
}

template <class V, class T>
void winograd_output_tiles(const WinogradGeometry&, const float* src, int64_t xi_stride, float bias, float* out)
{
    using vec = typename V::vec;
    constexpr int M = T::m, W = V::width, Q = W < 8 ? W : 8, C = (M + Q - 1) / Q * Q;
    static_assert(C <= kWinogradOutRow, "a row's columns fit its slots");
    output_transform<V, T>(src, xi_stride, V::set1(bias), [&](int r, const vec (&row)[1][M]) {
        vec o[C];
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) o[c] = c < M ? row[0][c < M ? c : 0] : V::set1(0.f);
        store_lane_rows<V, Q, C>(o, out + r * kWinogradOutRow, M * kWinogradOutRow);
    });
}

// Channel blocks (conv2d_blocked.h's layout), one tile of B channels at a
// time: the patch's pixels are vectors already, no transposes. The patch of
// tile `tile`, read from the layer's unpadded input (`pad` inside its padded
// extent, 0 past it), transformed into dst[xi * xi_stride].
template <class V, class T>
void winograd_input_block_tile(const WinogradGeometry& g, const WinogradBlockSource& s, int64_t tile, float* dst,
                               int64_t xi_stride)
{
    using vec = typename V::vec;
    constexpr int A = T::alpha, W = V::width;
    const int64_t y0 = tile / g.tiles_w() * T::m, x0 = tile % g.tiles_w() * T::m;
    const int64_t sy = y0 - s.top, sx = x0 - s.left; // the patch's corner in the input
    vec d[A][A];
    if (sy >= 0 && sx >= 0 && sy + A <= s.h && sx + A <= s.w) {
#pragma GCC unroll 8
        for (int r = 0; r < A; ++r)
#pragma GCC unroll 8
            for (int c = 0; c < A; ++c) d[r][c] = V::load(s.plane + ((sy + r) * s.w + sx + c) * W);
    } else {
        const vec pad = V::set1(s.pad), zero = V::set1(0.f);
        for (int r = 0; r < A; ++r)
            for (int c = 0; c < A; ++c) {
                const int64_t y = sy + r, x = sx + c;
                const bool inside = y >= 0 && y < s.h && x >= 0 && x < s.w;
                d[r][c] = inside ? V::load(s.plane + (y * s.w + x) * W)
                                 : y0 + r < s.own_h && x0 + c < s.own_w ? pad : zero;
            }
    }
    input_transform<V, T>(d, dst, xi_stride);
}

// One tile's Y = AT M A + bias (B output channels per vector), clamped to
// clamp[0..1] if given, into the blocked output plane: its rows and columns
// inside the plane.
template <class V, class T>
void winograd_output_block_tile(const WinogradGeometry& g, const float* src, int64_t xi_stride, const float* bias,
                                const float* clamp, float* plane, int64_t tile)
{
    using vec = typename V::vec;
    constexpr int M = T::m, W = V::width;
    const int64_t y0 = tile / g.tiles_w() * M, x0 = tile % g.tiles_w() * M;
    const int rows = static_cast<int>(std::min<int64_t>(M, g.out_h - y0));
    const int cols = static_cast<int>(std::min<int64_t>(M, g.out_w - x0));
    output_transform<V, T>(src, xi_stride, V::load(bias), [&](int r, const vec (&row)[1][M]) {
        if (r >= rows) return;
        vec o[1][M];
#pragma GCC unroll 8
        for (int c = 0; c < M; ++c) o[0][c] = row[0][c];
        if (clamp) clamp_tile<V, 1, M>(o, clamp);
        float* dst = plane + ((y0 + r) * g.out_w + x0) * W;
        if (cols == M) {
#pragma GCC unroll 8
            for (int c = 0; c < M; ++c) V::store(dst + c * W, o[0][c]);
        } else {
            for (int c = 0; c < cols; ++c) V::store(dst + c * W, o[0][c]);
        }
    });
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

template <class V>
void winograd_input_blocks(const WinogradGeometry& g, const WinogradBlockSource& s, int64_t tile, float* dst,
                           int64_t xi_stride)
{
    if (g.m == 6)
        winograd_input_block_tile<V, winograd::F63>(g, s, tile, dst, xi_stride);
    else
        winograd_input_block_tile<V, winograd::F43>(g, s, tile, dst, xi_stride);
}

template <class V>
void winograd_output_blocks(const WinogradGeometry& g, const float* src, int64_t xi_stride, const float* bias,
                            const float* clamp, float* plane, int64_t tile)
{
    if (g.m == 6)
        winograd_output_block_tile<V, winograd::F63>(g, src, xi_stride, bias, clamp, plane, tile);
    else
        winograd_output_block_tile<V, winograd::F43>(g, src, xi_stride, bias, clamp, plane, tile);
}

} // namespace
} // namespace kestrel::detail
