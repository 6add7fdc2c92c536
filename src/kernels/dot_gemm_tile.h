// The GEMM register tile of the dot-product instructions, written once for
// every ISA and both number formats whose depth goes in 4-byte words: int8
// (int8_gemm.h: a word holds 4 values, vpdpbusd sums their products into an
// int32 lane) and bfloat16 (bf16_gemm.h: a word holds 2, vdpbf16ps sums into
// an fp32 lane). A file under kernels/<isa>/ instantiates dot_gemm_tile<Dot,
// MR, NV> with its ISA's Dot:
//   A, Sum                    A's value type (a packed A panel's), the sums'
//   vec, operand              sum lanes (Dot::width of them), word lanes
//   load(p)                   4 * width bytes of a B panel
//   broadcast4(p)             4 bytes of an A panel in every lane
//   dot(acc, b, a)            acc + per lane the products of b's and a's
//                             values in one word, summed
//   set1(v), store(p, v), sum(v)  (the lanes' sum)
// MR x NV accumulators; per word NV loads of B, MR broadcasts of A. B's words
// are a packed panel's or, at offsets, an input read in place (WordPanel).
#pragma once
#include <cstdint>
#include <cstring>

#include "kernels/int8_gemm.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel {
namespace detail {
namespace {

// The 4 bytes at p as one int32 (a word of A, broadcast by Dot::broadcast4).
inline int32_t quad_word(const void* p)
{
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class Dot, int MR, int NV, class QuadOfB>
__attribute__((always_inline)) inline void dot_gemm_tile_words(int64_t quads, const typename Dot::A* a,
                                                               QuadOfB quad_of_b, const typename Dot::Sum* init,
                                                               typename Dot::Sum* c, int64_t ldc, int rows, int cols)
{
    using vec = typename Dot::vec;
    using operand = typename Dot::operand;
    using Sum = typename Dot::Sum;
    constexpr int per_word = 4 / sizeof(typename Dot::A);
    constexpr int W = Dot::width, NR = NV * W;
    vec acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[i][v] = Dot::set1(init && i < rows ? init[i] : 0);
    for (int64_t q = 0; q < quads; ++q) {
        const uint8_t* b = quad_of_b(q);
        operand bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) bv[v] = Dot::load(b + v * W * 4);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
            const operand av = Dot::broadcast4(a + i * per_word);
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) acc[i][v] = Dot::dot(acc[i][v], bv[v], av);
        }
        a += MR * per_word;
    }
    if (rows == MR && cols == NR) {
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
            for (int v = 0; v < NV; ++v) Dot::store(c + i * ldc + v * W, acc[i][v]);
        return;
    }
    Sum buf[MR * NR]; // a partial tile goes through here, keeping only rows x cols
    for (int i = 0; i < MR; ++i)
        for (int v = 0; v < NV; ++v) Dot::store(buf + i * NR + v * W, acc[i][v]);
    for (int i = 0; i < rows; ++i) std::memcpy(c + i * ldc, buf + i * NR, sizeof(Sum) * cols);
}

template <class Dot, int MR, int NV>
void dot_gemm_tile(int64_t words, const typename Dot::A* a, const WordPanel& b, const typename Dot::Sum* init,
                   typename Dot::Sum* c, int64_t ldc, int rows, int cols)
{
    const uint8_t* base = b.b;
    if (const int64_t* offsets = b.offsets)
        dot_gemm_tile_words<Dot, MR, NV>(words, a, [=](int64_t q) { return base + offsets[q]; }, init, c, ldc, rows,
                                         cols);
    else
        dot_gemm_tile_words<Dot, MR, NV>(words, a, [=, stride = b.stride](int64_t q) { return base + q * stride; },
                                         init, c, ldc, rows, cols);
}

// Dot products of R weight rows at a time with one input (its vectors loaded
// once per R rows); the tail of a row through zero-padded copies.
template <class Dot, int R>
void int8_row_dots_of(const int8_t* w, const uint8_t* x, int64_t n, int32_t* y)
{
    using vec = typename Dot::vec;
    constexpr int64_t B = Dot::width * 4; // bytes per vector
    vec acc[R];
    for (int r = 0; r < R; ++r) acc[r] = Dot::set1(0);
    const auto row = [&](int r, int64_t i) { return reinterpret_cast<const uint8_t*>(w + r * n + i); };
    int64_t i = 0;
    for (; i + B <= n; i += B) {
        const vec xv = Dot::load(x + i);
        for (int r = 0; r < R; ++r) acc[r] = Dot::dot(acc[r], xv, Dot::load(row(r, i)));
    }
    if (i < n) {
        uint8_t xt[B] = {}, wt[B] = {};
        std::memcpy(xt, x + i, static_cast<size_t>(n - i));
        const vec xv = Dot::load(xt);
        for (int r = 0; r < R; ++r) {
            std::memcpy(wt, row(r, i), static_cast<size_t>(n - i));
            acc[r] = Dot::dot(acc[r], xv, Dot::load(wt));
        }
    }
    for (int r = 0; r < R; ++r) y[r] = Dot::sum(acc[r]);
}

template <class Dot> void int8_row_dots(const int8_t* w, const uint8_t* x, int64_t n, int64_t rows, int32_t* y)
{
    int64_t o = 0;
    for (; o + 4 <= rows; o += 4) int8_row_dots_of<Dot, 4>(w + o * n, x, n, y + o);
    for (; o < rows; ++o) int8_row_dots_of<Dot, 1>(w + o * n, x, n, y + o);
}

} // namespace
} // namespace detail
} // namespace kestrel
