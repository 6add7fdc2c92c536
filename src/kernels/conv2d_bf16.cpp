#include "kernels/conv2d_bf16.h"

#include <algorithm>

#include "core/half.h"

namespace kestrel {

namespace {

int64_t word_planes(const Bf16GemmKernel& kern, const Conv2dGemmGeometry& g)
{
    return bf16_gemm_words(kern, g.inch_g);
}

// dst[c] = lo[c] and hi[c] as one word of bfloat16.
void interleave_pairs(const float* lo, const float* hi, int64_t n, uint32_t* dst)
{
    for (int64_t c = 0; c < n; ++c) dst[c] = bf16_bits(lo[c]) | bf16_bits(hi[c]) << 16;
}

} // namespace

Conv2dBf16 conv2d_bf16_prepare(const Bf16GemmKernel& kern, const float* weights, const float* bias,
                               const Conv2dGemmGeometry& g)
{
    Conv2dBf16 w;
    w.word_planes = word_planes(kern, g);
    const int64_t taps = g.kh * g.kw, channels = 2 * w.word_planes, depth = taps * channels;
    w.group_values = bf16_gemm_packed_a_values(kern, g.outch_g, depth);
    w.packed.resize(static_cast<size_t>(w.group_values * g.groups));
    // A group's weights reordered to (tap, channel), zero past inch_g.
    std::vector<float> reordered(static_cast<size_t>(g.outch_g * depth));
    for (int64_t grp = 0; grp < g.groups; ++grp) {
        std::fill(reordered.begin(), reordered.end(), 0.f);
        for (int64_t oc = 0; oc < g.outch_g; ++oc)
            for (int64_t ic = 0; ic < g.inch_g; ++ic)
                for (int64_t t = 0; t < taps; ++t)
                    reordered[oc * depth + t * channels + ic] = weights[((grp * g.outch_g + oc) * g.inch_g + ic) * taps + t];
        bf16_gemm_pack_a(kern, reordered.data(), g.outch_g, depth, depth, w.packed.data() + grp * w.group_values);
    }
    w.bias.assign(static_cast<size_t>(g.groups * g.outch_g), 0.f);
    if (bias) std::copy(bias, bias + g.groups * g.outch_g, w.bias.begin());
    return w;
}

int64_t conv2d_bf16_input_words(const Bf16GemmKernel& kern, const Conv2dGemmGeometry& g)
{
    return g.groups * word_planes(kern, g) * phase_planes(g).words() + kern.nr;
}

void conv2d_bf16_input(const Bf16GemmKernel& kern, const Conv2dBf16& w, const Conv2dGemmGeometry& g, const float* x,
                       int64_t h, int64_t width, int64_t pad_top, int64_t pad_left, float pad, uint32_t* dst,
                       const ParallelContext& ctx)
{
    const int64_t wp = w.word_planes;
    const std::vector<float> zeros(static_cast<size_t>(width), 0.f); // a channel past the group's
    lay_out_phase_planes(
        g, g.groups * wp, h, width, pad_top, pad_left, bf16_word(pad, pad), kern.nr,
        [&](int64_t q, int64_t y, int64_t x0, int64_t n, uint32_t* out) {
            const int64_t grp = q / wp, c0 = q % wp * 2;
            const auto row = [&](int64_t c) {
                return c < g.inch_g ? x + ((grp * g.inch_g + c) * h + y) * width + x0 : zeros.data();
            };
            interleave_pairs(row(c0), row(c0 + 1), n, out);
        },
        dst, ctx);
}

std::vector<int64_t> conv2d_bf16_offsets(const Conv2dGemmGeometry& g, const Conv2dBf16& w)
{
    return phase_plane_offsets(g, w.word_planes);
}

void conv2d_bf16(const Bf16GemmKernel& kern, const Conv2dBf16& w, const Conv2dGemmGeometry& g,
                 const std::vector<int64_t>& offsets, const uint32_t* input, const Bf16SumsFinished& finish,
                 const ParallelContext& ctx)
{
    const int64_t words = static_cast<int64_t>(offsets.size());
    const int64_t group_input = w.word_planes * phase_planes(g).words();
    const int64_t a_panel = kern.mr * words * 2;
    phase_planes_gemm<float>(
        g, kern.mr, kern.nr,
        [&](int64_t grp, int64_t p, int64_t j0, float* sums, int64_t ldc, int rows, int cols) {
            const WordPanel b{reinterpret_cast<const uint8_t*>(input + grp * group_input + j0), 0, offsets.data()};
            kern.tile(words, w.packed.data() + grp * w.group_values + p * a_panel, b,
                      w.bias.data() + grp * g.outch_g + p * kern.mr, sums, ldc, rows, cols);
        },
        finish, ctx);
}

} // namespace kestrel
