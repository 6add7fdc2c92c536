// Single-precision GEMM for the layers that reduce to one (Convolution first):
// C[i][j] = init[i] + sum_k A[i][k] * B[k][j].
//
// The work is split as in XNNPACK: a register-tile microkernel per ISA
// (gemm_tile.h, instantiated under kernels/<isa>/) and a driver here that packs
// the operands and walks the tiles. A is packed once (weights, at load time)
// into panels of `mr` rows stored k-major; B is packed per call, block by
// block, into panels of `nr` columns, also k-major, by a caller-supplied
// packer (a convolution packs its image-to-column view straight into panels).
//
// Every C value is one microkernel call summing k = 0..K-1 in order from its
// init value, so results depend on the ISA but never on the thread count or the
// blocking.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kestrel/error.h"
#include "kestrel/parallel.h"
#include "kestrel/tensor.h"

namespace kestrel {

// Where a tile reads a panel of B: row kk at b + kk*ldb, or at
// b + row_offsets[kk] when there are offsets (a convolution's input read in
// place, one offset per kernel tap).
struct GemmPanel {
    const float* b = nullptr;
    int64_t ldb = 0;
    const int64_t* row_offsets = nullptr;

    // The same panel from column j on.
    GemmPanel shifted(int64_t j) const { return GemmPanel{b + j, ldb, row_offsets}; }
    // The same panel from row k0 on.
    GemmPanel from_row(int64_t k0) const
    {
        return row_offsets ? GemmPanel{b, ldb, row_offsets + k0} : GemmPanel{b + k0 * ldb, ldb, nullptr};
    }
};

// Where each C value's sum starts.
enum class GemmStart {
    Zero,
    RowInit, // init[i] for row i (a bias per output channel)
    C,       // the value already in C (filled by the caller: a bias per column, beta * C, ...)
};

// A tile: see GemmKernel::tile.
using GemmTileFn = void (*)(int64_t k, const float* a, const float* a_next, const GemmPanel& b, GemmStart start,
                            const float* init, float* c, int64_t ldc, int rows, int cols, const float* clamp);

struct GemmKernel {
    const char* isa;
    int mr, nr;
    // c[i*ldc + j] = start + sum_k a[k*mr + i] * B[k][j] for i < rows <= mr
    // and j < cols <= nr, the sum taken in k order from the start; `a` is a
    // full panel (zero-padded past rows), b holds nr readable columns per k
    // (a packed panel: ldb = nr), init has `rows` values. With `clamp`, each
    // value is stored as std::min(std::max(value, clamp[0]), clamp[1]).
    // `a_next`, when not null, is data the caller reads next (A's next
    // panel, or the next piece of constant B: GemmNextB): the tile prefetches
    // it into L2 at A's pace, mr floats per k (weights streamed once per use).
    GemmTileFn tile;
    // The same for cols <= nr / 2 at half the work (a panel's last columns).
    GemmTileFn tile_half;
    // The same for cols <= narrow_cols(), at cols multiply-adds per k.
    void (*tile_narrow)(int64_t k, const float* a, const GemmPanel& b, GemmStart start, const float* init, float* c,
                        int64_t ldc, int rows, int cols, const float* clamp);
    // tile and tile_half for rows <= `rows` (< mr) at that many rows' work
    // (the last panel of 16 output channels is 4 rows of 12), fewest first.
    struct ShortTiles {
        int rows;
        GemmTileFn tile, tile_half;
    } short_tiles[2];

    int narrow_cols() const { return nr / 4; }
    // A panel of `rows` rows and `cols` valid columns, by the cheapest tiles
    // for it: the full one, or the half one and/or the narrow one (a 7x7
    // plane's 49 columns are 32 + 16 + 1, not 32 + 32), with as many rows as
    // the panel has.
    void panel(int64_t k, const float* a, const float* a_next, const GemmPanel& b, GemmStart start,
               const float* init, float* c, int64_t ldc, int rows, int cols, const float* clamp) const
    {
        const int half = nr / 2, narrow = narrow_cols();
        if (cols <= narrow) return tile_narrow(k, a, b, start, init, c, ldc, rows, cols, clamp);
        GemmTileFn full_fn = tile, half_fn = tile_half;
        for (const ShortTiles& s : short_tiles)
            if (rows <= s.rows) {
                full_fn = s.tile, half_fn = s.tile_half;
                break;
            }
        if (cols > half + narrow) return full_fn(k, a, a_next, b, start, init, c, ldc, rows, cols, clamp);
        const int first = std::min(cols, half);
        half_fn(k, a, a_next, b, start, init, c, ldc, rows, first, clamp);
        if (cols > first)
            tile_narrow(k, a, b.shifted(first), start, init, c + first, ldc, rows, cols - first, clamp);
    }
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA).
const GemmKernel& gemm_kernel();
// Every kernel this CPU can run, generic first (for tests).
std::vector<const GemmKernel*> gemm_kernels_available();

// A (m x k, a[i][kk] at a[i*row_stride + kk*col_stride]: row-major or, with
// the strides swapped, stored transposed) packed into ceil(m/mr) panels of k*mr floats.
std::vector<float> gemm_pack_a(const GemmKernel& kern, const float* a, int64_t m, int64_t k, int64_t row_stride,
                               int64_t col_stride = 1);
// The same into `dst`, which holds gemm_packed_a_floats(kern, m, k) floats.
void gemm_pack_a_into(const GemmKernel& kern, const float* a, int64_t m, int64_t k, int64_t row_stride,
                      int64_t col_stride, float* dst);
int64_t gemm_packed_a_floats(const GemmKernel& kern, int64_t m, int64_t k);
// The same with the panels split across ctx's threads (A an activation packed
// on every run).
void gemm_pack_a_into(const GemmKernel& kern, const float* a, int64_t m, int64_t k, int64_t row_stride,
                      int64_t col_stride, float* dst, const ParallelContext& ctx);

// pack_b for a row-major B (k x n, row stride ldb).
struct GemmRowMajorB {
    const float* b;
    int64_t k, ldb;
    int nr;
    void operator()(int64_t col0, int64_t cols, int64_t k0, int64_t kc, float* dst) const;
    bool direct(int64_t, int64_t, GemmPanel&) const { return false; }
};

// pack_b for B stored transposed: B[kk][j] = b[j*ldb + kk] (a weight matrix
// [outputs][inputs] as the B of x * W^T).
struct GemmTransposedB {
    const float* b;
    int64_t k, ldb;
    int nr;
    void operator()(int64_t col0, int64_t cols, int64_t k0, int64_t kc, float* dst) const;
    bool direct(int64_t, int64_t, GemmPanel&) const { return false; }
};

// pack_b for a B packed once (constant weights, gemm_pack_b): every panel is
// read where it lies.
struct GemmPackedB {
    const float* panels;
    int64_t k;
    int nr;
    void operator()(int64_t col0, int64_t cols, int64_t k0, int64_t kc, float* dst) const;
    bool direct(int64_t col, int64_t, GemmPanel& panel) const
    {
        panel = GemmPanel{panels + col / nr * nr * k, nr};
        return true;
    }
};

// All of B (n columns) packed by pack_b into ceil(n/nr) panels, for GemmPackedB.
template <class PackB> std::vector<float> gemm_pack_b(const GemmKernel& kern, int64_t n, int64_t k, const PackB& pack_b)
{
    std::vector<float> panels(static_cast<size_t>((n + kern.nr - 1) / kern.nr * kern.nr * k));
    if (n > 0) pack_b(0, n, 0, k, panels.data());
    return panels;
}

// Whether the tile may read B's k rows in place at row stride ldb floats: not
// when rows lie within 40 floats of a multiple of 4 KiB apart, where more
// rows than a cache set holds (8 on AMD Zen, 12 on Intel) would fall into the
// same few sets. (A 1x1 layer on a 55x55 plane, rows 47 floats short of
// 3 x 1024, runs 1.45x faster in place than packed; 7x7 planes, 49 floats,
// 1.07x; 8 channels of 160x160 read in place, 2x.)
inline bool gemm_direct_b_ok(int64_t ldb, int64_t k)
{
    constexpr int64_t kMinShift = 40, kRowsPerSet = 8;
    return k <= kRowsPerSet || (ldb % 1024 >= kMinShift && ldb % 1024 <= 1024 - kMinShift);
}

// A post for gemm_f32 that does nothing.
inline void gemm_no_post(int64_t, float*, int64_t) {}

// The depth a task multiplies at once: all of it while A (m x k) fits in L2
// beside a block of B (re-reading it per column block is then cheap), else
// chunks of 1024 rows of B, so that A streams from memory once per task.
// (1024 since 302b152, where it went in by accident from an experiment with
// 64-1024; session 13's measurements were all taken with it, and 256 against
// 1024 was within that VM's noise. To be settled on a quiet machine.)
inline int64_t gemm_depth_chunk(int64_t m, int64_t k)
{
    constexpr int64_t kAInL2 = 128 * 1024; // floats (512 KiB)
    return std::max<int64_t>(1, m * k <= kAInL2 ? k : std::min<int64_t>(k, 1024));
}

// Columns of B per block: a depth chunk of kc rows of the block, kc*cols
// floats, stays within about 256 KiB (in L2 while every A panel passes over it).
int64_t gemm_block_cols(const GemmKernel& kern, int64_t kc);

// How gemm_f32 splits C into tasks: column blocks of `block` columns (at
// most the cache's block), each cut into `row_splits` ranges of A panels.
struct GemmSplit {
    int64_t block, row_splits;
};

// The split whose busiest thread has the least work, the tasks dealt out in
// contiguous runs as parallel_for does: a task costs its columns times its
// rows (short tiles and narrow columns counted as they run), plus packing its
// block of B when `packs_b` (about 8 rows' work: each row split packs it
// again). Even shares matter most for small layers on two threads (3136
// columns in blocks of 2720 gave one thread 87 % of a 1x1 layer).
GemmSplit gemm_split(const GemmKernel& kern, int64_t m, int64_t n, int64_t max_block, bool packs_b, int threads);

// The B piece a task multiplies next (the next depth chunk of its block, or
// the first of the next task's block), when it lies in memory as contiguous
// panels (constant weights packed once): the tiles of the current piece
// prefetch it into L2 a slice each, at A's pace, so that no pass over it
// waits on memory (ViT's 145-row products read 9.4 MB of weights per layer
// once per run).
struct GemmNextB {
    static constexpr int kMaxPanels = 64;
    const float* panel[kMaxPanels];
    int64_t floats = 0; // per panel
    int panels = 0, current = 0;
    int64_t offset = 0;

    // Where the next tile's prefetch starts (it reads `per_tile` floats), or
    // null once all of the piece is handed out.
    const float* take(int64_t per_tile)
    {
        if (current >= panels) return nullptr;
        const float* at = panel[current] + offset;
        offset += per_tile;
        if (offset >= floats) ++current, offset = 0;
        return at;
    }
};

template <class PackB>
GemmNextB gemm_next_b(const GemmKernel& kern, const PackB& pack_b, int64_t col0, int64_t cols, int64_t k0, int64_t kc)
{
    GemmNextB next;
    if (cols > GemmNextB::kMaxPanels * kern.nr) return next;
    for (int64_t j0 = 0; j0 < cols; j0 += kern.nr) {
        GemmPanel panel;
        if (!pack_b.direct(col0 + j0, std::min<int64_t>(kern.nr, cols - j0), panel) || panel.row_offsets ||
            panel.ldb != kern.nr)
            return GemmNextB{};
        next.panel[next.panels++] = panel.from_row(k0).b;
    }
    next.floats = kc * kern.nr;
    return next;
}

// C (m x n, row stride ldc) = start + A*B with A from gemm_pack_a and B given
// by pack_b: pack_b(col0, cols, k0, kc, dst) writes rows [k0, k0+kc) of
// columns [col0, col0+cols) as ceil(cols/nr) panels of kc*nr floats, zero past
// `cols`; where pack_b.direct(col, cols, panel) returns true, the tile reads
// the panel of `cols` (<= nr) columns from `col` in place, where `panel` says
// (nr readable columns per row). post(row, col0, cols) runs on each
// finished piece of a C row (activation), after the tile's clamp (see
// GemmKernel::tile) if any.
//
// Tasks are (column block, range of A panels), split across the context's
// threads. Within a task the depth is taken in chunks of gemm_depth_chunk()
// (GotoBLAS's kc) when A is large: a chunk of B stays in L2 while every A
// panel passes over it, and each A panel is read once per task. A C value's sum continues from
// the value stored after the previous chunk, so it is the same k-order sum
// whatever the chunking or the thread count.
template <class PackB, class Post>
void gemm_f32(const GemmKernel& kern, int64_t m, int64_t n, int64_t k, const float* a_packed, GemmStart start,
              const float* init, float* c, int64_t ldc, const PackB& pack_b, const Post& post, const ParallelContext& ctx,
              const float* clamp = nullptr)
{
    if (m <= 0 || n <= 0) return;
    const int64_t depth_chunk = gemm_depth_chunk(m, k);
    GemmPanel probe;
    const bool packs_b = !pack_b.direct(0, std::min<int64_t>(kern.nr, n), probe);
    const GemmSplit split = gemm_split(kern, m, n, gemm_block_cols(kern, depth_chunk), packs_b, ctx.threads());
    const int64_t block = split.block, row_splits = split.row_splits;
    const int64_t col_blocks = (n + block - 1) / block;
    const int64_t panels = (m + kern.mr - 1) / kern.mr;
    // An A panel used by one or two B panels is read too briefly for the
    // hardware prefetcher to follow (each chunk of it a short stream): the
    // tile then prefetches the next A panel itself (resnet's 512-channel 3x3
    // layers on 7x7 planes, their weights from memory: 1.5x).
    const bool streams_a = std::min(block, n) <= 2 * kern.nr && depth_chunk < k;
    ctx.parallel_for(col_blocks * row_splits, [&](int64_t begin, int64_t end) {
        // The thread's own buffers, kept from call to call (no allocation per
        // call); so post() must not call gemm_f32 itself.
        thread_local std::vector<float> b_packed;
        thread_local std::vector<GemmPanel> b_panels;
        for (int64_t task = begin; task < end; ++task) {
            const int64_t cb = task / row_splits, rs = task % row_splits;
            const int64_t col0 = cb * block, cols = std::min(block, n - col0);
            const int64_t col_panels = (cols + kern.nr - 1) / kern.nr;
            const int64_t p_begin = panels * rs / row_splits, p_end = panels * (rs + 1) / row_splits;
            b_panels.resize(static_cast<size_t>(col_panels));
            for (int64_t k0 = 0; k0 < k; k0 += depth_chunk) {
                const int64_t kc = std::min(depth_chunk, k - k0);
                const bool first = k0 == 0, last = k0 + kc == k;
                GemmNextB next_b;
                if (!streams_a && !packs_b) {
                    if (!last) {
                        next_b = gemm_next_b(kern, pack_b, col0, cols, k0 + kc, std::min(depth_chunk, k - k0 - kc));
                    } else if (task + 1 < end) {
                        const int64_t next_col0 = (task + 1) / row_splits * block;
                        next_b = gemm_next_b(kern, pack_b, next_col0, std::min(block, n - next_col0), 0,
                                             std::min(depth_chunk, k));
                    }
                }
                // Each panel's rows [k0, k0 + kc): in place when pack_b allows it, else packed here.
                for (int64_t cp = 0; cp < col_panels; ++cp) {
                    const int64_t j0 = cp * kern.nr, w = std::min<int64_t>(kern.nr, cols - j0);
                    GemmPanel& panel = b_panels[cp];
                    if (pack_b.direct(col0 + j0, w, panel)) {
                        panel = panel.from_row(k0);
                        continue;
                    }
                    // Sized before any panel points into it, for every panel of the block.
                    b_packed.resize(std::max(b_packed.size(), static_cast<size_t>(col_panels * kern.nr * depth_chunk)));
                    float* dst = b_packed.data() + j0 * kc;
                    pack_b(col0 + j0, w, k0, kc, dst);
                    panel = GemmPanel{dst, kern.nr};
                }
                for (int64_t p = p_begin; p < p_end; ++p) {
                    const int64_t row0 = p * kern.mr;
                    const int rows = static_cast<int>(std::min<int64_t>(kern.mr, m - row0));
                    const GemmStart chunk_start = first ? start : GemmStart::C;
                    for (int64_t cp = 0; cp < col_panels; ++cp) {
                        const int64_t j0 = cp * kern.nr;
                        const int w = static_cast<int>(std::min<int64_t>(kern.nr, cols - j0));
                        const bool prefetch = streams_a && cp == 0 && p + 1 < p_end;
                        const float* ahead = prefetch ? a_packed + (p + 1) * kern.mr * k + k0 * kern.mr : nullptr;
                        if (!ahead && w > kern.narrow_cols()) ahead = next_b.take(kc * kern.mr);
                        kern.panel(kc, a_packed + p * kern.mr * k + k0 * kern.mr, ahead, b_panels[cp],
                                   chunk_start, chunk_start == GemmStart::RowInit ? init + row0 : nullptr,
                                   c + row0 * ldc + col0 + j0, ldc, rows, w, last ? clamp : nullptr);
                    }
                    if (last)
                        for (int i = 0; i < rows; ++i) post(row0 + i, c + (row0 + i) * ldc + col0, cols);
                }
            }
        }
    });
}

} // namespace kestrel
