#include "kernels/conv2d_int8_dot.h"

#include <algorithm>
#include <cstring>

#include "kernels/int8_output.h"

namespace kestrel {

namespace {

constexpr uint32_t kSignFlip = 0x80808080u; // int8 -> uint8 + 128, in each byte

// Per group, rounded up to the kernel's blocks (which then lie within one tap,
// their quads one plane apart: AMX loads a block as one tile of B).
int64_t channel_quads(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g)
{
    return int8_gemm_depth_quads(kern, g.inch_g);
}

// x's planes laid out as channel quads; words(src, n, out) writes the words
// of n pixels of four channels' rows (a row of zeros past the group's).
template <class T, class Words>
void lay_out_quads(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g, const T* x, int64_t h, int64_t w,
                   int64_t pad_top, int64_t pad_left, int8_t pad, uint8_t* dst, const ParallelContext& ctx,
                   const Words& words)
{
    const int64_t cq = channel_quads(kern, g);
    const uint32_t pad_word = (uint32_t(uint8_t(pad)) * 0x01010101u) ^ kSignFlip;
    const std::vector<T> zeros(static_cast<size_t>(w), T(0));
    lay_out_phase_planes(
        g, g.groups * cq, h, w, pad_top, pad_left, pad_word, kern.nr,
        [&](int64_t q, int64_t y, int64_t x0, int64_t n, uint32_t* out) {
            const int64_t grp = q / cq, c0 = q % cq * kInt8GemmQuad;
            const T* src[kInt8GemmQuad];
            for (int64_t i = 0; i < kInt8GemmQuad; ++i)
                src[i] = c0 + i < g.inch_g ? x + ((grp * g.inch_g + c0 + i) * h + y) * w + x0 : zeros.data();
            words(src, n, out);
        },
        reinterpret_cast<uint32_t*>(dst), ctx);
}

} // namespace

Conv2dInt8Dot conv2d_int8_dot_prepare(const Int8GemmKernel& kern, const int8_t* weights, const Conv2dGemmGeometry& g)
{
    Conv2dInt8Dot w;
    w.kern = &kern;
    w.channel_quads = channel_quads(kern, g);
    const int64_t taps = g.kh * g.kw, depth = g.depth(), quad_depth = taps * w.channel_quads * kInt8GemmQuad;
    w.group_bytes = int8_gemm_packed_a_bytes(kern, g.outch_g, quad_depth);
    w.packed.resize(static_cast<size_t>(w.group_bytes * g.groups));
    // A group's weights reordered to (tap, channel quad, channel in quad), zero past inch_g.
    std::vector<int8_t> reordered(static_cast<size_t>(g.outch_g * quad_depth));
    for (int64_t grp = 0; grp < g.groups; ++grp) {
        std::fill(reordered.begin(), reordered.end(), int8_t{0});
        for (int64_t oc = 0; oc < g.outch_g; ++oc)
            for (int64_t ic = 0; ic < g.inch_g; ++ic)
                for (int64_t t = 0; t < taps; ++t)
                    reordered[oc * quad_depth + (t * w.channel_quads + ic / kInt8GemmQuad) * kInt8GemmQuad + ic % kInt8GemmQuad] =
                        weights[((grp * g.outch_g + oc) * g.inch_g + ic) * taps + t];
        int8_gemm_pack_a(kern, reordered.data(), g.outch_g, quad_depth, quad_depth,
                         w.packed.data() + grp * w.group_bytes);
    }
    const std::vector<int64_t> sums = int8_gemm_row_sums(weights, g.groups * g.outch_g, depth, depth);
    w.start.resize(sums.size());
    // Wrapped to int32 as the sums themselves are (a malformed model's depth may overflow).
    for (size_t i = 0; i < sums.size(); ++i) w.start[i] = static_cast<int32_t>(static_cast<uint32_t>(-128 * sums[i]));
    return w;
}

int64_t conv2d_int8_dot_input_bytes(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g)
{
    return (g.groups * channel_quads(kern, g) * phase_planes(g).words() + kern.nr) * kInt8GemmQuad;
}

void conv2d_int8_dot_input(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g, const int8_t* x, int64_t h,
                           int64_t w, int64_t pad_top, int64_t pad_left, int8_t pad, uint8_t* dst,
                           const ParallelContext& ctx)
{
    const Int8OutputKernel& out = int8_output_kernel();
    lay_out_quads(kern, g, x, h, w, pad_top, pad_left, pad, dst, ctx,
                  [&](const int8_t* const* src, int64_t n, uint32_t* words) { out.offset_quads(src, n, kSignFlip, words); });
}

void conv2d_int8_dot_input(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g, const uint8_t* x, int64_t h,
                           int64_t w, int64_t pad_top, int64_t pad_left, int8_t pad, uint8_t* dst,
                           const ParallelContext& ctx)
{
    const Int8OutputKernel& out = int8_output_kernel();
    lay_out_quads(kern, g, reinterpret_cast<const int8_t*>(x), h, w, pad_top, pad_left, pad, dst, ctx,
                  [&](const int8_t* const* src, int64_t n, uint32_t* words) { out.offset_quads(src, n, 0u, words); });
}

void conv2d_int8_dot_input(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g, const float* x, float scale,
                           int64_t h, int64_t w, int64_t pad_top, int64_t pad_left, int8_t pad, uint8_t* dst,
                           const ParallelContext& ctx)
{
    const Int8OutputKernel& out = int8_output_kernel();
    lay_out_quads(kern, g, x, h, w, pad_top, pad_left, pad, dst, ctx, [&](const float* const* src, int64_t n, uint32_t* words) {
        out.quantize_offset_quads(src, n, scale, words);
    });
}

std::vector<int64_t> conv2d_int8_dot_offsets(const Conv2dGemmGeometry& g, const Conv2dInt8Dot& w)
{
    return phase_plane_offsets(g, w.channel_quads);
}

void conv2d_int8_dot(const Int8GemmKernel& kern, const Conv2dInt8Dot& w, const Conv2dGemmGeometry& g,
                     const std::vector<int64_t>& offsets, const uint8_t* input, const Int8SumsFinished& finish,
                     const ParallelContext& ctx)
{
    const int64_t quads = static_cast<int64_t>(offsets.size());
    const int64_t group_input = w.channel_quads * phase_planes(g).words() * kInt8GemmQuad;
    const int64_t a_panel = kern.mr * quads * kInt8GemmQuad;
    phase_planes_gemm<int32_t>(
        g, kern.mr, kern.nr,
        [&](int64_t grp, int64_t p, int64_t j0, int32_t* sums, int64_t ldc, int rows, int cols) {
            const WordPanel b{input + grp * group_input + j0 * kInt8GemmQuad, 0, offsets.data()};
            kern.tile(quads, w.packed.data() + grp * w.group_bytes + p * a_panel, b,
                      w.start.data() + grp * g.outch_g + p * kern.mr, sums, ldc, rows, cols);
        },
        finish, ctx);
}

} // namespace kestrel
