// The input of a 2-D convolution on a dot-product GEMM (int8 quads:
// conv2d_int8_dot.h; bfloat16 pairs: conv2d_bf16.h), laid out once per run as
// planes of 4-byte words, a word holding a few consecutive channels' values
// at one padded pixel, each plane split by stride phase: the padded input's
// pixel (y, x) goes to phase plane (y % stride_h, x % stride_w) at (y /
// stride_h, x / stride_w), planes of h x w words. Output pixel (oy, ox) at tap
// (ky, kx) then reads phase (ky*dilation_h % stride_h, kx*dilation_w %
// stride_w) at (oy + ky*dilation_h / stride_h, ox + kx*dilation_w / stride_w):
// at every stride, consecutive output pixels are consecutive words, and a
// GEMM panel's columns are read in place across whole phase rows (the columns
// past the output's width computed and dropped). The GEMM's depth runs over
// (tap, word plane): one offset per depth word. (Stride 1: one phase, the
// padded plane itself.)
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "kernels/conv2d_gemm.h"

namespace kestrel {

struct PhasePlanes {
    int64_t h, w, count;
    int64_t plane() const { return h * w; }
    int64_t words() const { return count * plane(); } // of one word plane, all phases
};

PhasePlanes phase_planes(const Conv2dGemmGeometry& g);
// The GEMM's columns: up to the last output's pixel across phase rows.
int64_t phase_gemm_columns(const Conv2dGemmGeometry& g);

// Each depth word's byte offset from a pixel's word in its group's laid-out
// input, in the GEMM's depth order (tap, word plane), for `word_planes` word
// planes per group.
std::vector<int64_t> phase_plane_offsets(const Conv2dGemmGeometry& g, int64_t word_planes);

// Lays out `planes` word planes (all groups'), then `tail_words` words of
// pad_word that the last panels' tiles read past them. row(plane, y, x, n,
// out) writes the words of the input's row y, columns [x, x + n), of word
// plane `plane`; padding is pad_word. The input is h x w, its pixel (0, 0) at
// (pad_top, pad_left) of g's padded plane.
using PhaseRowWords = std::function<void(int64_t plane, int64_t y, int64_t x, int64_t n, uint32_t* out)>;
void lay_out_phase_planes(const Conv2dGemmGeometry& g, int64_t planes, int64_t h, int64_t w, int64_t pad_top,
                          int64_t pad_left, uint32_t pad_word, int64_t tail_words, const PhaseRowWords& row,
                          uint32_t* dst, const ParallelContext& ctx);

// The kept columns of GEMM columns [c0, c0 + cols): pieces of phase rows
// (the columns past out_w dropped), each its position in the task and the
// output pixel of its first column. The pieces' pixels are consecutive.
struct PhaseRowPiece {
    int64_t column, pixel, count;
};
std::vector<PhaseRowPiece> phase_row_pieces(const Conv2dGemmGeometry& g, int64_t c0, int64_t cols);

// A task's sums of `rows` channels (row stride ld) with the pieces moved
// left over the dropped columns: each channel's pixels then lie in one run
// from column 0.
template <class Sum>
void close_up_pieces(const std::vector<PhaseRowPiece>& pieces, Sum* sums, int64_t ld, int64_t rows)
{
    for (int64_t r = 0; r < rows; ++r) {
        Sum* row = sums + r * ld;
        int64_t kept = 0;
        for (const PhaseRowPiece& piece : pieces) {
            if (piece.column != kept) std::memmove(row + kept, row + piece.column, sizeof(Sum) * piece.count);
            kept += piece.count;
        }
    }
}

// The GEMM of a laid-out input, in tasks of column panels (and of row panels
// when few): tile(group, row_panel, column, sums, ldc, rows, cols) writes a
// kernel-sized tile of sums for output channels [row_panel * mr, + rows) and
// GEMM columns [column, + cols); finish(channel, pixel, sums, count) then
// gets output channel `channel`'s pixels [pixel, pixel + count) (of out_h x
// out_w), a task's at once, each pixel once.
template <class Sum>
using PhaseSumsFinished = std::function<void(int64_t channel, int64_t pixel, const Sum* sums, int64_t count)>;
template <class Sum, class Tile>
void phase_planes_gemm(const Conv2dGemmGeometry& g, int mr, int nr, const Tile& tile,
                       const PhaseSumsFinished<Sum>& finish, const ParallelContext& ctx)
{
    constexpr int64_t kTaskSums = 16 * 1024; // a task's sums at most
    const int64_t columns = phase_gemm_columns(g);
    const int64_t col_panels = (columns + nr - 1) / nr, row_panels = (g.outch_g + mr - 1) / mr;
    // Tasks of a few panels, so that finish() sees runs long enough to
    // repay its call (a 3-channel first layer spent more there than in its
    // sums), their sums within kTaskSums, and two per thread at least.
    const int64_t rows_held = row_panels * mr;
    const int64_t chunk = std::clamp<int64_t>(
        std::min(kTaskSums / (rows_held * nr), (col_panels + 2 * ctx.threads() - 1) / (2 * ctx.threads())), 1,
        col_panels);
    const int64_t chunks = (col_panels + chunk - 1) / chunk, chunk_cols = chunk * nr;
    // Few column tasks (a 7x7 plane is one panel): the output channels split too.
    const int64_t col_tasks = g.groups * chunks;
    const int64_t row_splits = std::clamp<int64_t>((2 * ctx.threads() + col_tasks - 1) / col_tasks, 1, row_panels);
    ctx.parallel_for(col_tasks * row_splits, [&](int64_t begin, int64_t end) {
        thread_local std::vector<Sum> sums; // the thread's own, kept from call to call
        sums.resize(std::max(sums.size(), static_cast<size_t>(rows_held * chunk_cols)));
        for (int64_t task = begin; task < end; ++task) {
            const int64_t grp = task / row_splits / chunks, c0 = task / row_splits % chunks * chunk_cols;
            const int64_t split = task % row_splits;
            const int64_t p_begin = row_panels * split / row_splits, p_end = row_panels * (split + 1) / row_splits;
            const int64_t oc_begin = p_begin * mr, oc_end = std::min(g.outch_g, p_end * mr);
            const int64_t cols = std::min(chunk_cols, columns - c0);
            for (int64_t j0 = c0; j0 < c0 + cols; j0 += nr) {
                const int panel_cols = static_cast<int>(std::min<int64_t>(nr, columns - j0));
                for (int64_t p = p_begin; p < p_end; ++p) {
                    const int rows = static_cast<int>(std::min<int64_t>(mr, g.outch_g - p * mr));
                    tile(grp, p, j0, sums.data() + p * mr * chunk_cols + (j0 - c0), chunk_cols, rows, panel_cols);
                }
            }
            const std::vector<PhaseRowPiece> pieces = phase_row_pieces(g, c0, cols);
            if (pieces.empty()) continue;
            Sum* task_sums = sums.data() + oc_begin * chunk_cols;
            close_up_pieces(pieces, task_sums, chunk_cols, oc_end - oc_begin);
            const int64_t pixels = pieces.back().pixel + pieces.back().count - pieces.front().pixel;
            for (int64_t oc = oc_begin; oc < oc_end; ++oc)
                finish(grp * g.outch_g + oc, pieces.front().pixel, sums.data() + oc * chunk_cols, pixels);
        }
    });
}

} // namespace kestrel
