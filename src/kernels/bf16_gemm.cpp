#include "kernels/bf16_gemm.h"

#include <algorithm>
#include <cstring>

#include "core/cpu_features.h"
#include "core/half.h"
#include "kernels/dot_gemm_panels.h"

namespace kestrel {

namespace detail {
const Bf16GemmKernel& bf16_gemm_kernel_generic();
const Bf16GemmKernel& bf16_gemm_kernel_avx512bf16();
const Bf16GemmKernel& bf16_gemm_kernel_amx();
} // namespace detail

// As the int8 kernels, a feature beside the ISA levels.
std::vector<const Bf16GemmKernel*> bf16_gemm_kernels_available()
{
    std::vector<const Bf16GemmKernel*> all{&detail::bf16_gemm_kernel_generic()};
    if (cpu_has_avx512_bf16()) all.push_back(&detail::bf16_gemm_kernel_avx512bf16());
    if (cpu_has_amx_bf16()) all.push_back(&detail::bf16_gemm_kernel_amx());
    return all;
}

const Bf16GemmKernel& bf16_gemm_kernel()
{
    static const Bf16GemmKernel& best = *bf16_gemm_kernels_available().back();
    return best;
}

bool bf16_gemm_has_dot_instructions() { return bf16_gemm_kernels_available().size() > 1; }

uint32_t bf16_word(float lo, float hi)
{
    return uint32_t(float_to_bf16(lo)) | uint32_t(float_to_bf16(hi)) << 16;
}

int64_t bf16_gemm_words(const Bf16GemmKernel& kern, int64_t k)
{
    const int64_t words = (k + 1) / 2;
    return (words + kern.block_words - 1) / kern.block_words * kern.block_words;
}

namespace {

// `lines` lines of k values (line l's value kk at src[l * line_stride + kk *
// depth_stride]) packed as panels of `width` lines, [word block][line][block
// words], zero past k and past the last line.
int64_t packed_values(const Bf16GemmKernel& kern, int64_t lines, int64_t width, int64_t k)
{
    return (lines + width - 1) / width * width * bf16_gemm_words(kern, k) * 2;
}

void pack_words(const Bf16GemmKernel& kern, const float* src, int64_t lines, int64_t k, int64_t line_stride,
                int64_t depth_stride, int64_t width, uint16_t* dst)
{
    const int64_t words = bf16_gemm_words(kern, k), block = kern.block_words;
    std::memset(dst, 0, static_cast<size_t>(packed_values(kern, lines, width, k)) * sizeof(uint16_t));
    uint32_t* out = reinterpret_cast<uint32_t*>(dst);
    for (int64_t l = 0; l < lines; ++l) {
        uint32_t* panel = out + l / width * width * words + l % width * block;
        const float* line = src + l * line_stride;
        for (int64_t w = 0; w < (k + 1) / 2; ++w) {
            const float lo = line[2 * w * depth_stride];
            const float hi = 2 * w + 1 < k ? line[(2 * w + 1) * depth_stride] : 0.f;
            panel[w / block * width * block + w % block] = bf16_word(lo, hi);
        }
    }
}

} // namespace

int64_t bf16_gemm_packed_a_values(const Bf16GemmKernel& kern, int64_t m, int64_t k)
{
    return packed_values(kern, m, kern.mr, k);
}

void bf16_gemm_pack_a(const Bf16GemmKernel& kern, const float* a, int64_t m, int64_t k, int64_t row_stride,
                      uint16_t* dst, int64_t col_stride)
{
    pack_words(kern, a, m, k, row_stride, col_stride, kern.mr, dst);
}

int64_t bf16_gemm_packed_b_values(const Bf16GemmKernel& kern, int64_t n, int64_t k)
{
    // B's words go one per panel row whatever the kernel's blocks.
    return (n + kern.nr - 1) / kern.nr * kern.nr * bf16_gemm_words(kern, k) * 2;
}

void bf16_gemm_pack_b(const Bf16GemmKernel& kern, const float* b, int64_t k, int64_t n, int64_t row_stride,
                      uint16_t* dst, int64_t col_stride)
{
    const int64_t words = bf16_gemm_words(kern, k), nr = kern.nr;
    std::memset(dst, 0, static_cast<size_t>(bf16_gemm_packed_b_values(kern, n, k)) * sizeof(uint16_t));
    uint32_t* out = reinterpret_cast<uint32_t*>(dst);
    for (int64_t j = 0; j < n; ++j) {
        uint32_t* panel = out + j / nr * nr * words + j % nr;
        for (int64_t w = 0; w < (k + 1) / 2; ++w) {
            const float lo = b[2 * w * row_stride + j * col_stride];
            const float hi = 2 * w + 1 < k ? b[(2 * w + 1) * row_stride + j * col_stride] : 0.f;
            panel[w * nr] = bf16_word(lo, hi);
        }
    }
}

std::vector<uint16_t> bf16_gemm_pack_b_from_float_panels(const Bf16GemmKernel& kern, const float* panels, int64_t k,
                                                         int64_t n, int64_t float_nr)
{
    std::vector<float> b(static_cast<size_t>(k * n)); // B unpacked, row-major
    for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t j = 0; j < n; ++j) b[kk * n + j] = panels[(j / float_nr * k + kk) * float_nr + j % float_nr];
    std::vector<uint16_t> packed(static_cast<size_t>(bf16_gemm_packed_b_values(kern, n, k)));
    bf16_gemm_pack_b(kern, b.data(), k, n, n, packed.data());
    return packed;
}

void bf16_gemm_rows(const Bf16GemmKernel& kern, int64_t m, int64_t n, int64_t k, const float* x, int64_t ldx,
                    const uint16_t* b_packed, float* y, uint16_t* a_scratch, const ParallelContext& ctx)
{
    const int64_t panels = (m + kern.mr - 1) / kern.mr, panel_values = kern.mr * bf16_gemm_words(kern, k) * 2;
    ctx.parallel_for(panels, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p)
            bf16_gemm_pack_a(kern, x + p * kern.mr * ldx, std::min<int64_t>(kern.mr, m - p * kern.mr), k, ldx,
                             a_scratch + p * panel_values);
    });
    bf16_gemm(kern, m, n, k, a_scratch, nullptr, b_packed, y, n, ctx);
}

void bf16_gemm(const Bf16GemmKernel& kern, int64_t m, int64_t n, int64_t k, const uint16_t* a_packed,
               const float* init, const uint16_t* b_packed, float* c, int64_t ldc, const ParallelContext& ctx)
{
    const int64_t words = bf16_gemm_words(kern, k);
    dot_gemm_panels(kern, m, n, words, a_packed, kern.mr * words * 2, init,
                    reinterpret_cast<const uint8_t*>(b_packed), kern.nr * words * 4, c, ldc, ctx);
}

} // namespace kestrel
