#include "kernels/gemm.h"

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
                      int64_t col_stride, float* dst, const ExecContext& ctx)
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

} // namespace kestrel
