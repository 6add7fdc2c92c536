#include "kernels/conv2d_phase_planes.h"

namespace kestrel {

PhasePlanes phase_planes(const Conv2dGemmGeometry& g)
{
    return {(g.in_h + g.stride_h - 1) / g.stride_h, (g.in_w + g.stride_w - 1) / g.stride_w, g.stride_h * g.stride_w};
}

int64_t phase_gemm_columns(const Conv2dGemmGeometry& g) { return (g.out_h - 1) * phase_planes(g).w + g.out_w; }

std::vector<PhaseRowPiece> phase_row_pieces(const Conv2dGemmGeometry& g, int64_t c0, int64_t cols)
{
    const int64_t row = phase_planes(g).w;
    if (row == g.out_w) return {{0, c0, cols}}; // the phase rows are the output's
    std::vector<PhaseRowPiece> pieces;
    for (int64_t j = 0; j < cols;) {
        const int64_t oy = (c0 + j) / row, ox = (c0 + j) % row, count = std::min(cols - j, row - ox);
        if (ox < g.out_w) pieces.push_back({j, oy * g.out_w + ox, std::min(count, g.out_w - ox)});
        j += count;
    }
    return pieces;
}

std::vector<int64_t> phase_plane_offsets(const Conv2dGemmGeometry& g, int64_t word_planes)
{
    const PhasePlanes ph = phase_planes(g);
    std::vector<int64_t> offsets;
    offsets.reserve(static_cast<size_t>(g.kh * g.kw * word_planes));
    for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t dy = ky * g.dilation_h, dx = kx * g.dilation_w;
            const int64_t phase = dy % g.stride_h * g.stride_w + dx % g.stride_w;
            for (int64_t q = 0; q < word_planes; ++q)
                offsets.push_back(((q * ph.count + phase) * ph.plane() + dy / g.stride_h * ph.w + dx / g.stride_w) *
                                  4);
        }
    return offsets;
}

void lay_out_phase_planes(const Conv2dGemmGeometry& g, int64_t planes, int64_t h, int64_t w, int64_t pad_top,
                          int64_t pad_left, uint32_t pad_word, int64_t tail_words, const PhaseRowWords& row_words,
                          uint32_t* dst, const ParallelContext& ctx)
{
    const PhasePlanes ph = phase_planes(g);
    const int64_t plane_words = ph.words();
    std::fill(dst + planes * plane_words, dst + planes * plane_words + tail_words, pad_word);
    // Input rows [y0, y1) and columns [x0, x1) of the padded plane hold x.
    const int64_t y0 = std::clamp<int64_t>(pad_top, 0, g.in_h), y1 = std::clamp<int64_t>(pad_top + h, y0, g.in_h);
    const int64_t x0 = std::clamp<int64_t>(pad_left, 0, g.in_w), x1 = std::clamp<int64_t>(pad_left + w, x0, g.in_w);
    ctx.parallel_for(planes, [&](int64_t begin, int64_t end) {
        thread_local std::vector<uint32_t> padded_row; // a padded row before its phases split it
        padded_row.resize(static_cast<size_t>(ph.w * g.stride_w));
        for (int64_t q = begin; q < end; ++q) {
            uint32_t* out = dst + q * plane_words;
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
                    row_words(q, y - pad_top, x0 - pad_left, x1 - x0, row + x0);
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

} // namespace kestrel
