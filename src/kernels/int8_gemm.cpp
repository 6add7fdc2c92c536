#include "kernels/int8_gemm.h"

#include <algorithm>
#include <cstring>

#include "core/cpu_features.h"
#include "kernels/dot_gemm_panels.h"

namespace kestrel {

namespace detail {
const Int8GemmKernel& int8_gemm_kernel_generic();
const Int8GemmKernel& int8_gemm_kernel_avxvnni();
const Int8GemmKernel& int8_gemm_kernel_avx512vnni();
const Int8GemmKernel& int8_gemm_kernel_amx();
} // namespace detail

// Not an IsaKernels family: the dot-product instructions are a feature of
// their own beside the ISA levels (AVX-512 CPUs without VNNI exist).
std::vector<const Int8GemmKernel*> int8_gemm_kernels_available()
{
    std::vector<const Int8GemmKernel*> all{&detail::int8_gemm_kernel_generic()};
    if (cpu_has_avx_vnni()) all.push_back(&detail::int8_gemm_kernel_avxvnni());
    if (cpu_has_avx512_vnni()) all.push_back(&detail::int8_gemm_kernel_avx512vnni());
    if (cpu_has_amx_int8()) all.push_back(&detail::int8_gemm_kernel_amx());
    return all;
}

const Int8GemmKernel& int8_gemm_kernel()
{
    static const Int8GemmKernel& best = *int8_gemm_kernels_available().back();
    return best;
}

const Int8GemmKernel& int8_gemm_kernel_for_runs(int64_t run)
{
    const std::vector<const Int8GemmKernel*> all = int8_gemm_kernels_available();
    for (auto it = all.rbegin(); it != all.rend(); ++it)
        if ((*it)->block_quads == 1 || 2 * int8_gemm_quads(run) >= (*it)->block_quads) return **it;
    return *all.front();
}

bool int8_gemm_has_dot_instructions() { return int8_gemm_kernels_available().size() > 1; }

int64_t int8_gemm_depth_quads(const Int8GemmKernel& kern, int64_t k)
{
    return (int8_gemm_quads(k) + kern.block_quads - 1) / kern.block_quads * kern.block_quads;
}

namespace {

// `lines` lines (A's rows, or B's columns) of k values, line l's value kk at
// src[l * line_stride + kk * depth_stride], packed as panels of `width` lines:
// [quad block][line in panel][block quads][4 bytes] (blocks of `block` quads),
// zero past k and past the last line.
int64_t packed_bytes(int64_t lines, int64_t width, int64_t quads)
{
    return (lines + width - 1) / width * width * quads * kInt8GemmQuad;
}

template <class T>
void pack_quads(const T* src, int64_t lines, int64_t k, int64_t quads, int64_t line_stride, int64_t depth_stride,
                int64_t width, int64_t block, T* dst)
{
    const int64_t panel_bytes = width * quads * kInt8GemmQuad;
    std::memset(dst, 0, static_cast<size_t>(packed_bytes(lines, width, quads)));
    for (int64_t l = 0; l < lines; ++l) {
        T* panel = dst + l / width * panel_bytes + l % width * block * kInt8GemmQuad;
        for (int64_t kk = 0; kk < k; ++kk) {
            const int64_t q = kk / kInt8GemmQuad;
            panel[(q / block * width * block + q % block) * kInt8GemmQuad + kk % kInt8GemmQuad] =
                src[l * line_stride + kk * depth_stride];
        }
    }
}

} // namespace

int64_t int8_gemm_packed_a_bytes(const Int8GemmKernel& kern, int64_t m, int64_t k)
{
    return packed_bytes(m, kern.mr, int8_gemm_depth_quads(kern, k));
}

void int8_gemm_pack_a(const Int8GemmKernel& kern, const int8_t* a, int64_t m, int64_t k, int64_t row_stride,
                      int8_t* dst)
{
    pack_quads(a, m, k, int8_gemm_depth_quads(kern, k), row_stride, 1, kern.mr, kern.block_quads, dst);
}

std::vector<int64_t> int8_gemm_row_sums(const int8_t* a, int64_t m, int64_t k, int64_t row_stride)
{
    std::vector<int64_t> sums(static_cast<size_t>(m), 0);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t kk = 0; kk < k; ++kk) sums[i] += a[i * row_stride + kk];
    return sums;
}

int64_t int8_gemm_packed_b_bytes(const Int8GemmKernel& kern, int64_t n, int64_t k)
{
    return packed_bytes(n, kern.nr, int8_gemm_depth_quads(kern, k));
}

void int8_gemm_pack_b(const Int8GemmKernel& kern, const uint8_t* b, int64_t k, int64_t n, int64_t row_stride,
                      uint8_t* dst)
{
    // B's quads go one per panel row whatever the kernel's blocks.
    pack_quads(b, n, k, int8_gemm_depth_quads(kern, k), 1, row_stride, kern.nr, 1, dst);
}

void int8_gemm_pack_b_transposed(const Int8GemmKernel& kern, const uint8_t* bt, int64_t n, int64_t k,
                                 int64_t row_stride, uint8_t* dst)
{
    pack_quads(bt, n, k, int8_gemm_depth_quads(kern, k), row_stride, 1, kern.nr, 1, dst);
}

void int8_gemm(const Int8GemmKernel& kern, int64_t m, int64_t n, int64_t k, const int8_t* a_packed,
               const int32_t* init, const uint8_t* b_packed, int32_t* c, int64_t ldc, const ParallelContext& ctx)
{
    const int64_t quads = int8_gemm_depth_quads(kern, k);
    dot_gemm_panels(kern, m, n, quads, a_packed, kern.mr * quads * kInt8GemmQuad, init, b_packed,
                    kern.nr * quads * kInt8GemmQuad, c, ldc, ctx);
}

} // namespace kestrel
