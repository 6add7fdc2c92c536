// The GEMM register tile (see gemm.h), written once for every ISA: a file
// under kernels/<isa>/ instantiates gemm_tile<VectorOf<width>, MR, NV>
// (vector_of.h), compiled with that ISA's flags.
//
// The tile holds MR x NV accumulator registers (MR rows of the output, NV*width
// columns). Per k it loads NV vectors of the B panel and broadcasts MR values
// of the A panel: (MR + NV) loads for MR*NV fused multiply-adds. B's rows are
// either ldb floats apart or where the panel's row offsets say (a convolution
// reading its input in place); the loop is compiled once for each.
#pragma once
#include <cstdint>
#include <cstring>

#include "kernels/gemm.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel {
namespace detail {
namespace {

template <class V, int MR, int NV, class RowOfB>
__attribute__((always_inline)) inline void gemm_tile_rows(int64_t k, const float* a, RowOfB row_of_b, GemmStart start,
                                                          const float* init, float* c, int64_t ldc, int rows, int cols,
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
        a += MR;
    }
    if (clamp) {
        const vec lo = V::set1(clamp[0]), hi = V::set1(clamp[1]);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) {
                const vec x = acc[i][v] < lo ? lo : acc[i][v]; // std::max(x, lo)
                acc[i][v] = hi < x ? hi : x;                   // std::min(x, hi)
            }
    }
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

template <class V, int MR, int NV>
void gemm_tile(int64_t k, const float* a, const GemmPanel& b, GemmStart start, const float* init, float* c,
               int64_t ldc, int rows, int cols, const float* clamp)
{
    const float* base = b.b;
    if (const int64_t* offsets = b.row_offsets)
        gemm_tile_rows<V, MR, NV>(k, a, [=](int64_t kk) { return base + offsets[kk]; }, start, init, c, ldc, rows,
                                  cols, clamp);
    else
        gemm_tile_rows<V, MR, NV>(k, a, [=, ldb = b.ldb](int64_t kk) { return base + kk * ldb; }, start, init, c,
                                  ldc, rows, cols, clamp);
}

} // namespace
} // namespace detail
} // namespace kestrel
