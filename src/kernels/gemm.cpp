#include "kernels/gemm.h"
#include <algorithm>

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(GemmKernel, gemm)

int64_t gemm_packed_a_floats(const GemmKernel& kern, int64_t m, int64_t k)
{
    return (m + kern.mr - 1) / kern.mr * kern.mr * k;
}

void gemm_pack_a_into(const GemmKernel& kern, const float* a, int64_t m, int64_t k, int64_t row_stride,
                      int64_t col_stride, float* packed)
{
    const int64_t panels = (m + kern.mr - 1) / kern.mr;
    for (int64_t p = 0; p < panels; ++p) {
        float* dst = packed + p * kern.mr * k;
        const int64_t rows = std::min<int64_t>(kern.mr, m - p * kern.mr);
        if (rows < kern.mr) std::fill(dst, dst + kern.mr * k, 0.f);
        // Written in order (one mr-wide column after another) from mr row
        // streams: a panel is larger than L1, so filling it row by row in
        // strided writes would fetch each line mr times.
        const float* top = a + p * kern.mr * row_stride;
        for (int64_t kk = 0; kk < k; ++kk) {
            const float* col = top + kk * col_stride;
            float* out = dst + kk * kern.mr;
            for (int64_t i = 0; i < rows; ++i) out[i] = col[i * row_stride];
        }
    }
}

void gemm_pack_a_into(const GemmKernel& kern, const float* a, int64_t m, int64_t k, int64_t row_stride,
                      int64_t col_stride, float* dst, const ParallelContext& ctx)
{
    ctx.parallel_for((m + kern.mr - 1) / kern.mr, [&](int64_t begin, int64_t end) {
        const int64_t rows = std::min(m, end * kern.mr) - begin * kern.mr;
        gemm_pack_a_into(kern, a + begin * kern.mr * row_stride, rows, k, row_stride, col_stride,
                         dst + begin * kern.mr * k);
    });
}

std::vector<float> gemm_pack_a(const GemmKernel& kern, const float* a, int64_t m, int64_t k, int64_t row_stride,
                               int64_t col_stride)
{
    std::vector<float> packed(static_cast<size_t>(gemm_packed_a_floats(kern, m, k)));
    gemm_pack_a_into(kern, a, m, k, row_stride, col_stride, packed.data());
    return packed;
}

void GemmRowMajorB::operator()(int64_t col0, int64_t cols, int64_t k0, int64_t kc, float* dst) const
{
    for (int64_t j0 = 0; j0 < cols; j0 += nr, dst += nr * kc) {
        const int64_t w = std::min<int64_t>(nr, cols - j0);
        for (int64_t kk = 0; kk < kc; ++kk) {
            const float* row = b + (k0 + kk) * ldb + col0 + j0;
            std::copy(row, row + w, dst + kk * nr);
            std::fill(dst + kk * nr + w, dst + (kk + 1) * nr, 0.f);
        }
    }
}

void GemmTransposedB::operator()(int64_t col0, int64_t cols, int64_t k0, int64_t kc, float* dst) const
{
    for (int64_t j0 = 0; j0 < cols; j0 += nr, dst += nr * kc) {
        const int64_t w = std::min<int64_t>(nr, cols - j0);
        for (int64_t j = 0; j < nr; ++j) {
            const float* src = j < w ? b + (col0 + j0 + j) * ldb + k0 : nullptr;
            for (int64_t kk = 0; kk < kc; ++kk) dst[kk * nr + j] = src ? src[kk] : 0.f;
        }
    }
}

void GemmPackedB::operator()(int64_t col0, int64_t cols, int64_t k0, int64_t kc, float* dst) const
{
    for (int64_t j0 = 0; j0 < cols; j0 += nr, dst += nr * kc) {
        GemmPanel panel;
        direct(col0 + j0, 0, panel);
        const float* src = panel.b + k0 * nr;
        std::copy(src, src + nr * kc, dst);
    }
}

int64_t gemm_block_cols(const GemmKernel& kern, int64_t kc)
{
    constexpr int64_t kBlockFloats = 64 * 1024; // 256 KiB of B per depth chunk
    const int64_t panels = std::max<int64_t>(1, kBlockFloats / (std::max<int64_t>(kc, 1) * kern.nr));
    return panels * kern.nr;
}

namespace {

// The work of a task of `rows` rows and `cols` columns, as the tiles run it:
// rows in steps of 4 (the short tiles), columns in quarter panels.
int64_t gemm_task_cost(const GemmKernel& kern, int64_t rows, int64_t cols, bool packs_b)
{
    const int64_t quarter = std::max(1, kern.nr / 4);
    const int64_t cols_run = (cols + quarter - 1) / quarter * quarter;
    int64_t rows_run = rows / kern.mr * kern.mr;
    if (rows % kern.mr != 0) rows_run += std::min<int64_t>(kern.mr, (rows % kern.mr + 3) / 4 * 4);
    return cols_run * (rows_run + (packs_b ? 8 : 0));
}

// The busiest thread's work when `threads` threads take the tasks of a split
// in contiguous runs, as ThreadPool::parallel_for deals them.
int64_t gemm_busiest_thread(const GemmKernel& kern, int64_t m, int64_t n, const GemmSplit& split, bool packs_b,
                            int threads)
{
    const int64_t col_blocks = (n + split.block - 1) / split.block;
    const int64_t panels = (m + kern.mr - 1) / kern.mr;
    const int64_t tasks = col_blocks * split.row_splits;
    const int64_t chunks = std::min<int64_t>(tasks, threads);
    int64_t busiest = 0;
    for (int64_t c = 0; c < chunks; ++c) {
        int64_t work = 0;
        for (int64_t task = tasks * c / chunks; task < tasks * (c + 1) / chunks; ++task) {
            const int64_t cb = task / split.row_splits, rs = task % split.row_splits;
            const int64_t cols = std::min(split.block, n - cb * split.block);
            const int64_t row0 = panels * rs / split.row_splits * kern.mr;
            const int64_t row_end = std::min(m, panels * (rs + 1) / split.row_splits * kern.mr);
            work += gemm_task_cost(kern, row_end - row0, cols, packs_b);
        }
        busiest = std::max(busiest, work);
    }
    return busiest;
}

} // namespace

GemmSplit gemm_split(const GemmKernel& kern, int64_t m, int64_t n, int64_t max_block, bool packs_b, int threads)
{
    const int64_t min_blocks = (n + max_block - 1) / max_block;
    GemmSplit best{max_block, 1};
    if (threads <= 1) return best;
    const int64_t panels = (m + kern.mr - 1) / kern.mr, col_panels = (n + kern.nr - 1) / kern.nr;
    int64_t best_work = gemm_busiest_thread(kern, m, n, best, packs_b, threads);
    // More blocks than the cache needs, up to two rounds of threads more;
    // row splits up to one per thread. Fewest tasks win ties.
    for (int64_t blocks = min_blocks; blocks <= std::min(col_panels, min_blocks + 2 * threads); ++blocks)
        for (int64_t splits = 1; splits <= std::min<int64_t>(panels, threads); ++splits) {
            const GemmSplit split{(col_panels + blocks - 1) / blocks * kern.nr, splits};
            const int64_t work = gemm_busiest_thread(kern, m, n, split, packs_b, threads);
            if (work < best_work) best = split, best_work = work;
        }
    return best;
}

} // namespace kestrel
