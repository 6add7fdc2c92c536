// The GEMM register tile (see gemm.h), written once for every ISA: a file
// under kernels/<isa>/ instantiates gemm_tile<VectorOf<width>, MR, NV>
// (vector_of.h), compiled with that ISA's flags.
//
// The tile holds MR x NV accumulator registers (MR rows of the output, NV*width
// columns); A's panels hold AR >= MR rows (a tile of fewer rows than the
// panels have serves a last, short panel). Per k it loads NV vectors of the B panel and broadcasts MR values
// of the A panel: (MR + NV) loads for MR*NV fused multiply-adds. B's rows are
// either ldb floats apart or where the panel's row offsets say (a convolution
// reading its input in place); the loop is compiled once for each.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/gemm.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel {
namespace detail {
namespace {

template <class V, int MR, int AR, int NV, bool Prefetch, class RowOfB>
__attribute__((always_inline)) inline void gemm_tile_rows(int64_t k, const float* a, const float* a_next,
                                                          RowOfB row_of_b, GemmStart start, const float* init,
                                                          float* c, int64_t ldc, int rows, int cols,
                                                          const float* clamp)
{
    using vec = typename V::vec;
    constexpr int NR = NV * V::width;
    const bool full = rows == MR && cols == NR;
    vec acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
        const vec row_start = V::set1(start == GemmStart::RowInit && i < rows ? init[i] : 0.f);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v)
            acc[i][v] = start != GemmStart::C ? row_start : full ? V::load(c + i * ldc + v * V::width) : V::set1(0.f);
    }
    if (start == GemmStart::C && !full)
        for (int i = 0; i < rows; ++i) {
            float row[NR] = {}; // the row's values, zero past `cols` (never stored)
            std::memcpy(row, c + i * ldc, sizeof(float) * cols);
            for (int v = 0; v < NV; ++v) acc[i][v] = V::load(row + v * V::width);
        }
    for (int64_t kk = 0; kk < k; ++kk) {
        if (Prefetch) __builtin_prefetch(a_next + kk * AR, 0, 2); // to L2
        const float* b = row_of_b(kk);
        vec bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) bv[v] = V::load(b + v * V::width);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
            const vec av = V::set1(a[i]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) acc[i][v] = V::fmadd(av, bv[v], acc[i][v]);
        }
        a += AR;
    }
    if (clamp) clamp_tile<V>(acc, clamp);
    if (full) {
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) V::store(c + i * ldc + v * V::width, acc[i][v]);
        return;
    }
    float buf[MR * NR]; // a partial tile goes through here, keeping only rows x cols
    for (int i = 0; i < MR; ++i)
        for (int v = 0; v < NV; ++v) V::store(buf + i * NR + v * V::width, acc[i][v]);
    for (int i = 0; i < rows; ++i) std::memcpy(c + i * ldc, buf + i * NR, sizeof(float) * cols);
}

template <class V, int MR, int AR, int NV, bool Prefetch>
void gemm_tile_with(int64_t k, const float* a, const float* a_next, const GemmPanel& b, GemmStart start,
                    const float* init, float* c, int64_t ldc, int rows, int cols, const float* clamp)
{
    const float* base = b.b;
    if (const int64_t* offsets = b.row_offsets)
        gemm_tile_rows<V, MR, AR, NV, Prefetch>(k, a, a_next, [=](int64_t kk) { return base + offsets[kk]; }, start,
                                            init, c, ldc, rows, cols, clamp);
    else
        gemm_tile_rows<V, MR, AR, NV, Prefetch>(k, a, a_next, [=, ldb = b.ldb](int64_t kk) { return base + kk * ldb; },
                                            start, init, c, ldc, rows, cols, clamp);
}

template <class V, int MR, int NV, int AR = MR>
void gemm_tile(int64_t k, const float* a, const float* a_next, const GemmPanel& b, GemmStart start, const float* init,
               float* c, int64_t ldc, int rows, int cols, const float* clamp)
{
    if (a_next)
        gemm_tile_with<V, MR, AR, NV, true>(k, a, a_next, b, start, init, c, ldc, rows, cols, clamp);
    else
        gemm_tile_with<V, MR, AR, NV, false>(k, a, nullptr, b, start, init, c, ldc, rows, cols, clamp);
}

// The last few columns of a panel (T <= 8): vectors along the MR rows (A's
// packed layout, NA vectors, the lanes past MR unused) and one accumulator
// set per column, so T columns cost T multiply-adds per k instead of a half
// tile's. Each value is the same k-order sum of the same fused multiply-adds
// as in gemm_tile, so the bits match.
template <class V, int MR, int T, class RowOfB>
__attribute__((always_inline)) inline void gemm_tile_columns(int64_t k, const float* a, RowOfB row_of_b,
                                                             GemmStart start, const float* init, float* c,
                                                             int64_t ldc, int rows, const float* clamp)
{
    using vec = typename V::vec;
    constexpr int W = V::width, NA = (MR + W - 1) / W;
    float lanes[NA * W] = {};
    vec acc[T][NA];
    for (int j = 0; j < T; ++j) {
        if (start == GemmStart::RowInit) std::memcpy(lanes, init, sizeof(float) * rows);
        if (start == GemmStart::C)
            for (int i = 0; i < rows; ++i) lanes[i] = c[i * ldc + j];
        for (int v = 0; v < NA; ++v) acc[j][v] = V::load(lanes + v * W);
    }
    const auto step = [&](int64_t kk, const float* a_k) {
        const float* b = row_of_b(kk);
        vec av[NA];
#pragma GCC unroll 4
        for (int v = 0; v < NA; ++v) av[v] = V::load(a_k + v * W);
#pragma GCC unroll 8
        for (int j = 0; j < T; ++j) {
            const vec bj = V::set1(b[j]);
#pragma GCC unroll 4
            for (int v = 0; v < NA; ++v) acc[j][v] = V::fmadd(av[v], bj, acc[j][v]);
        }
    };
    // The vector loads read past the k's MR values into the next k's: the
    // last k goes through a copy, so nothing past the panel is read.
    for (int64_t kk = 0; kk + 1 < k; ++kk) step(kk, a + kk * MR);
    if (k > 0) {
        float last[NA * W] = {};
        std::memcpy(last, a + (k - 1) * MR, sizeof(float) * MR);
        step(k - 1, last);
    }
    for (int j = 0; j < T; ++j) {
        for (int v = 0; v < NA; ++v) V::store(lanes + v * W, acc[j][v]);
        for (int i = 0; i < rows; ++i) {
            float x = lanes[i];
            if (clamp) x = std::min(std::max(x, clamp[0]), clamp[1]);
            c[i * ldc + j] = x;
        }
    }
}

template <class V, int MR>
void gemm_tile_narrow(int64_t k, const float* a, const GemmPanel& b, GemmStart start, const float* init, float* c,
                      int64_t ldc, int rows, int cols, const float* clamp)
{
    const float* base = b.b;
    const int64_t* offsets = b.row_offsets;
    const int64_t ldb = b.ldb;
    const auto run = [&](auto columns) {
        constexpr int T = decltype(columns)::value;
        if (offsets)
            gemm_tile_columns<V, MR, T>(k, a, [=](int64_t kk) { return base + offsets[kk]; }, start, init, c, ldc,
                                        rows, clamp);
        else
            gemm_tile_columns<V, MR, T>(k, a, [=](int64_t kk) { return base + kk * ldb; }, start, init, c, ldc, rows,
                                        clamp);
    };
    switch (cols) {
    case 1: return run(std::integral_constant<int, 1>{});
    case 2: return run(std::integral_constant<int, 2>{});
    case 3: return run(std::integral_constant<int, 3>{});
    case 4: return run(std::integral_constant<int, 4>{});
    case 5: return run(std::integral_constant<int, 5>{});
    case 6: return run(std::integral_constant<int, 6>{});
    case 7: return run(std::integral_constant<int, 7>{});
    default: return run(std::integral_constant<int, 8>{});
    }
}

} // namespace
} // namespace detail
} // namespace kestrel
