#include "kernels/conv2d_int8_dot.h"

#include <algorithm>
#include <cstring>

namespace kestrel {

namespace {

constexpr uint32_t kSignFlip = 0x80808080u; // int8 -> uint8 + 128, in each byte
constexpr int64_t kChunkInts = 16 * 1024;    // a task's sums at most (64 KiB)

int64_t channel_quads(const Conv2dGemmGeometry& g) { return (g.inch_g + kInt8GemmQuad - 1) / kInt8GemmQuad; }

// Stride phases: the padded input's pixel (y, x) is laid out in phase plane
// (y % stride_h, x % stride_w) at (y / stride_h, x / stride_w), planes of h x w
// words. Output pixel (oy, ox) at tap (ky, kx) then reads phase
// (ky*dilation_h % stride_h, kx*dilation_w % stride_w) at (oy + ky*dilation_h /
// stride_h, ox + kx*dilation_w / stride_w): at every stride, consecutive
// output pixels are consecutive words, and a panel is read in place across
// whole phase rows. (Stride 1: one phase, the padded plane itself.)
struct Phases {
    int64_t h, w, count;
    int64_t plane() const { return h * w; }
};

Phases phases(const Conv2dGemmGeometry& g)
{
    return {(g.in_h + g.stride_h - 1) / g.stride_h, (g.in_w + g.stride_w - 1) / g.stride_w, g.stride_h * g.stride_w};
}

// The GEMM's columns: up to the last output's pixel across phase rows (the
// columns past out_w in each row are computed and dropped).
int64_t gemm_columns(const Conv2dGemmGeometry& g) { return (g.out_h - 1) * phases(g).w + g.out_w; }

// dst[c] = the bytes a[c], b[c], d[c], e[c] (lowest first) as one word, each offset by 128.
void interleave_quads(const int8_t* const (&src)[kInt8GemmQuad], int64_t n, uint32_t* dst)
{
    for (int64_t c = 0; c < n; ++c)
        dst[c] = (uint32_t(uint8_t(src[0][c])) | uint32_t(uint8_t(src[1][c])) << 8 |
                  uint32_t(uint8_t(src[2][c])) << 16 | uint32_t(uint8_t(src[3][c])) << 24) ^
                 kSignFlip;
}

} // namespace

Conv2dInt8Dot conv2d_int8_dot_prepare(const Int8GemmKernel& kern, const int8_t* weights, const Conv2dGemmGeometry& g)
{
    Conv2dInt8Dot w;
    w.channel_quads = channel_quads(g);
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
    const Phases ph = phases(g);
    return (g.groups * channel_quads(g) * ph.count * ph.plane() + kern.nr) * kInt8GemmQuad;
}

void conv2d_int8_dot_input(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g, const int8_t* x, int64_t h,
                           int64_t w, int64_t pad_top, int64_t pad_left, int8_t pad, uint8_t* dst,
                           const ExecContext& ctx)
{
    const Phases ph = phases(g);
    const int64_t cq = channel_quads(g), quad_words = ph.count * ph.plane(), planes = g.groups * cq;
    const uint32_t pad_word = (uint32_t(uint8_t(pad)) * 0x01010101u) ^ kSignFlip;
    uint32_t* words = reinterpret_cast<uint32_t*>(dst);
    std::fill(words + planes * quad_words, words + planes * quad_words + kern.nr, kSignFlip);
    // Input rows [y0, y1) and columns [x0, x1) of the padded plane hold x.
    const int64_t y0 = std::clamp<int64_t>(pad_top, 0, g.in_h), y1 = std::clamp<int64_t>(pad_top + h, y0, g.in_h);
    const int64_t x0 = std::clamp<int64_t>(pad_left, 0, g.in_w), x1 = std::clamp<int64_t>(pad_left + w, x0, g.in_w);
    ctx.parallel_for(planes, [&](int64_t begin, int64_t end) {
        // The thread's own: the row of a channel past the group's, a padded row before its phases split it.
        thread_local std::vector<int8_t> zeros;
        thread_local std::vector<uint32_t> padded_row;
        zeros.assign(static_cast<size_t>(w), 0);
        padded_row.resize(static_cast<size_t>(ph.w * g.stride_w));
        for (int64_t q = begin; q < end; ++q) {
            const int64_t grp = q / cq, c0 = q % cq * kInt8GemmQuad;
            uint32_t* out = words + q * quad_words;
            // Phase rows past the padded plane (read only by dropped columns).
            for (int64_t y = g.in_h; y < ph.h * g.stride_h; ++y)
                for (int64_t px = 0; px < g.stride_w; ++px) {
                    uint32_t* row = out + ((y % g.stride_h * g.stride_w + px) * ph.h + y / g.stride_h) * ph.w;
                    std::fill(row, row + ph.w, pad_word);
                }
            for (int64_t y = 0; y < g.in_h; ++y) {
                // Padded row y goes to row y / stride_h of phases (y % stride_h, 0..stride_w):
                // built in place at stride 1 along rows, else in padded_row and then dealt out.
                uint32_t* phase_row0 = out + (y % g.stride_h * g.stride_w * ph.h + y / g.stride_h) * ph.w;
                uint32_t* row = g.stride_w == 1 ? phase_row0 : padded_row.data();
                std::fill(row + g.in_w, row + ph.w * g.stride_w, pad_word); // up to whole phases
                if (y < y0 || y >= y1) {
                    std::fill(row, row + g.in_w, pad_word);
                } else {
                    std::fill(row, row + x0, pad_word);
                    std::fill(row + x1, row + g.in_w, pad_word);
                    const int8_t* src[kInt8GemmQuad];
                    for (int64_t i = 0; i < kInt8GemmQuad; ++i)
                        src[i] = c0 + i < g.inch_g
                                     ? x + ((grp * g.inch_g + c0 + i) * h + y - pad_top) * w + x0 - pad_left
                                     : zeros.data();
                    interleave_quads(src, x1 - x0, row + x0);
                }
                if (g.stride_w == 1) continue;
                for (int64_t px = 0; px < g.stride_w; ++px) {
                    uint32_t* phase_row = phase_row0 + px * ph.h * ph.w;
                    for (int64_t i = 0; i < ph.w; ++i) phase_row[i] = row[i * g.stride_w + px];
                }
            }
        }
    });
}

std::vector<int64_t> conv2d_int8_dot_offsets(const Conv2dGemmGeometry& g, const Conv2dInt8Dot& w)
{
    const Phases ph = phases(g);
    std::vector<int64_t> offsets;
    for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t dy = ky * g.dilation_h, dx = kx * g.dilation_w;
            const int64_t phase = dy % g.stride_h * g.stride_w + dx % g.stride_w;
            for (int64_t q = 0; q < w.channel_quads; ++q)
                offsets.push_back(((q * ph.count + phase) * ph.plane() + dy / g.stride_h * ph.w + dx / g.stride_w) *
                                  kInt8GemmQuad);
        }
    return offsets;
}


void conv2d_int8_dot(const Int8GemmKernel& kern, const Conv2dInt8Dot& w, const Conv2dGemmGeometry& g,
                     const std::vector<int64_t>& offsets, const uint8_t* input, const Int8SumsFinished& finish,
                     const ExecContext& ctx)
{
    const Phases ph = phases(g);
    const int64_t columns = gemm_columns(g);
    const int64_t quads = static_cast<int64_t>(offsets.size());
    const int64_t group_input = w.channel_quads * ph.count * ph.plane() * kInt8GemmQuad;
    const int64_t col_panels = (columns + kern.nr - 1) / kern.nr, row_panels = (g.outch_g + kern.mr - 1) / kern.mr;
    const int64_t a_panel = kern.mr * quads * kInt8GemmQuad;
    // Tasks of a few panels, so that finish() sees pieces of rows long
    // enough to repay its call (a 3-channel first layer spent more there than
    // in its sums), their sums within 64 KiB, and two per thread at least.
    const int64_t rows_held = row_panels * kern.mr;
    const int64_t chunk = std::clamp<int64_t>(std::min(kChunkInts / (rows_held * kern.nr),
                                                       (col_panels + 2 * ctx.threads() - 1) / (2 * ctx.threads())),
                                              1, col_panels);
    const int64_t chunks = (col_panels + chunk - 1) / chunk, chunk_cols = chunk * kern.nr;
    // Few column tasks (a 7x7 plane is one panel): the output channels split too.
    const int64_t col_tasks = g.groups * chunks;
    const int64_t row_splits = std::clamp<int64_t>((2 * ctx.threads() + col_tasks - 1) / col_tasks, 1, row_panels);
    ctx.parallel_for(col_tasks * row_splits, [&](int64_t begin, int64_t end) {
        thread_local std::vector<int32_t> sums; // the thread's own, kept from call to call
        sums.resize(std::max(sums.size(), static_cast<size_t>(rows_held * chunk_cols)));
        for (int64_t task = begin; task < end; ++task) {
            const int64_t grp = task / row_splits / chunks, c0 = task / row_splits % chunks * chunk_cols;
            const int64_t split = task % row_splits;
            const int64_t p_begin = row_panels * split / row_splits, p_end = row_panels * (split + 1) / row_splits;
            const int64_t oc_begin = p_begin * kern.mr, oc_end = std::min(g.outch_g, p_end * kern.mr);
            const int64_t cols = std::min(chunk_cols, columns - c0);
            const uint8_t* group_x = input + grp * group_input;
            const int8_t* a = w.packed.data() + grp * w.group_bytes;
            for (int64_t j0 = c0; j0 < c0 + cols; j0 += kern.nr) {
                const int panel_cols = static_cast<int>(std::min<int64_t>(kern.nr, columns - j0));
                const Int8Panel b{group_x + j0 * kInt8GemmQuad, 0, offsets.data()};
                for (int64_t p = p_begin; p < p_end; ++p) {
                    const int64_t oc0 = p * kern.mr;
                    const int rows = static_cast<int>(std::min<int64_t>(kern.mr, g.outch_g - oc0));
                    kern.tile(quads, a + p * a_panel, b, w.start.data() + grp * g.outch_g + oc0,
                              sums.data() + oc0 * chunk_cols + (j0 - c0), chunk_cols, rows, panel_cols);
                }
            }
            // The columns as runs of output pixels: within a phase row, up to out_w.
            for (int64_t j = 0; j < cols;) {
                int64_t first = c0 + j, count = cols - j, skip = 0;
                if (ph.w != g.out_w) { // else the phase rows are the output's
                    const int64_t oy = (c0 + j) / ph.w, ox = (c0 + j) % ph.w;
                    count = std::min<int64_t>(count, ph.w - ox);
                    skip = ox >= g.out_w ? count : 0;
                    if (!skip) first = oy * g.out_w + ox, count = std::min(count, g.out_w - ox);
                }
                if (!skip)
                    for (int64_t oc = oc_begin; oc < oc_end; ++oc)
                        finish(grp * g.outch_g + oc, first, sums.data() + oc * chunk_cols + j, count);
                j += skip ? skip : count;
            }
        }
    });
}

} // namespace kestrel
