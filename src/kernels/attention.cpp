#include "kernels/attention.h"

#include "kernels/softmax_row.h"

namespace kestrel {

void attention_rows(const AttentionHead& h, float scale, const AttentionMask& mask, int64_t row0, int64_t rows,
                    std::vector<float>& scratch)
{
    const GemmKernel& kern = gemm_kernel();
    const ParallelContext serial(nullptr, 1);
    const int64_t packed = std::max(gemm_packed_a_floats(kern, rows, h.D), gemm_packed_a_floats(kern, rows, h.Lk));
    scratch.resize(static_cast<size_t>(rows * h.Lk + packed));
    float* scores = scratch.data();
    float* a = scores + rows * h.Lk;
    // S = Q K^T: K read as the transposed B.
    gemm_pack_a_into(kern, h.q + row0 * h.ldq, rows, h.D, h.ldq, 1, a);
    gemm_f32(kern, rows, h.Lk, h.D, a, GemmStart::Zero, nullptr, scores, h.Lk, GemmTransposedB{h.k, h.D, h.ldk, kern.nr},
             gemm_no_post, serial);
    for (int64_t r = 0; r < rows; ++r) {
        float* s = scores + r * h.Lk;
        if (scale != 1.f)
            for (int64_t j = 0; j < h.Lk; ++j) s[j] *= scale;
        if (mask) mask(row0 + r, s);
        softmax_row(s, s, h.Lk);
    }
    // O = P V.
    gemm_pack_a_into(kern, scores, rows, h.Lk, h.Lk, 1, a);
    gemm_f32(kern, rows, h.Dv, h.Lk, a, GemmStart::Zero, nullptr, h.out + row0 * h.ldo, h.ldo,
             GemmRowMajorB{h.v, h.Lk, h.ldv, kern.nr}, gemm_no_post, serial);
}

} // namespace kestrel
