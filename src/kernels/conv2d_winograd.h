// 3x3 stride-1 convolution by Winograd's minimal filtering F(m x m, 3 x 3)
// (Lavin & Gray 2015): the output is cut into m x m tiles; each tile's
// (m+2) x (m+2) input patch d and each 3x3 kernel g are transformed,
//   V = BT d B,   U = G g GT   (alpha x alpha, alpha = m + 2),
// multiplied point by point and summed over input channels, which for every
// one of the alpha^2 points xi is a GEMM (output channels x input channels by
// input channels x tiles), and transformed back: Y = AT M A. A tile costs
// alpha^2 multiply-adds per channel pair against 9 m^2 for the direct sum
// (F(4,3): 36 against 144; F(6,3): 64 against 324).
//
// Three passes over a chunk of tiles, each split across the threads:
//  1. input transform: V[xi] written straight as GEMM B panels (kernels/gemm.h);
//  2. alpha^2 GEMMs on the ISA's register tile, U packed once at load;
//  3. output transform, bias and the fused activation, into the output plane.
// The per-ISA part (kernels/<isa>/winograd_*.cpp) transforms one vector of
// tiles at a time (tiles in the lanes). Every output is computed the same way
// whatever the thread count.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/conv2d_blocked.h"
#include "kernels/gemm.h"

namespace kestrel {

struct WinogradGeometry {
    int m = 4;                  // output tile side: 4 (F(4,3)) or 6 (F(6,3))
    int64_t inch = 0, outch = 0;
    int64_t in_h = 0, in_w = 0;   // the padded input plane
    int64_t out_h = 0, out_w = 0; // in_h - 2, in_w - 2

    int alpha() const { return m + 2; }
    int64_t tiles_h() const { return (out_h + m - 1) / m; }
    int64_t tiles_w() const { return (out_w + m - 1) / m; }
    int64_t tiles() const { return tiles_h() * tiles_w(); }
};

// The floats a tile's output row takes in WinogradKernel::output (m <= 6 of them used).
constexpr int kWinogradOutRow = 8;

// A channel-blocked input plane as a Winograd layer reads it: h x w pixels
// of B floats (B the kernel's lanes), inside a padded extent of own_h x own_w
// with `top` rows and `left` columns of `pad` before it; 0 past that extent
// (the last tiles' overhang, so that no large pad value meets a real one).
struct WinogradBlockSource {
    const float* plane;
    int64_t h, w, top, left, own_h, own_w;
    float pad;
};

struct WinogradKernel {
    const char* isa;
    int lanes; // tiles per vector on planes; channels per vector (the channel block) on blocks
    // V = BT d B for tiles tile0 .. tile0+lanes-1 of one input plane (patch
    // values past the plane, and tiles past the last, read as 0):
    // dst[xi * xi_stride + lane] for xi = row * alpha + column.
    void (*input)(const WinogradGeometry& g, const float* plane, int64_t tile0, float* dst, int64_t xi_stride);
    // Y = bias + AT M A for `lanes` tiles, M[xi] = src[xi * xi_stride + lane]:
    // out[(lane * m + row) * kWinogradOutRow + column], each row's slots past
    // m holding 0 (lanes * m * kWinogradOutRow floats).
    void (*output)(const WinogradGeometry& g, const float* src, int64_t xi_stride, float bias, float* out);
    // On channel blocks, one tile of one block: V = BT d B of tile `tile`'s
    // patch of `src`, dst[xi * xi_stride .. + lanes).
    void (*input_blocks)(const WinogradGeometry& g, const WinogradBlockSource& src, int64_t tile, float* dst,
                         int64_t xi_stride);
    // Y = AT M A + bias (lanes values, one per channel of the block), clamped
    // to [clamp[0], clamp[1]] unless clamp is null, for M[xi] = src[xi *
    // xi_stride .. + lanes): tile `tile` of the blocked output plane (g.out_h x g.out_w pixels).
    void (*output_blocks)(const WinogradGeometry& g, const float* src, int64_t xi_stride, const float* bias,
                          const float* clamp, float* plane, int64_t tile);
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const WinogradKernel& winograd_kernel();
std::vector<const WinogradKernel*> winograd_kernels_available();

// The tile side (4 or 6) that computes a layer fastest by Winograd, or 0 when
// the direct GEMM (kernels/conv2d_gemm.h) is faster: an estimate of each
// path's time from its multiply-adds (with the GEMM's columns rounded up to
// whole panels), the transforms' work and the weight bytes streamed.
int winograd_pick_tile(const GemmKernel& gemm, int64_t inch, int64_t outch, int64_t out_h, int64_t out_w);

// Weights [outch][inch][3][3] transformed (in double) and packed for `gemm`:
// alpha^2 A matrices (outch x inch), point after point.
std::vector<float> winograd_pack_weights(const GemmKernel& gemm, int m, const float* weights, int64_t outch,
                                         int64_t inch);

// Tiles per chunk, and the scratch floats a chunk needs (V and M).
int64_t winograd_chunk_tiles(const GemmKernel& gemm, const WinogradGeometry& g);
int64_t winograd_scratch_floats(const GemmKernel& gemm, const WinogradGeometry& g);

// On channel blocks (Layout::ChannelBlocks on both sides): the alpha^2
// products are 1x1 convolutions of the direct tile (kernels/conv2d_blocked.h)
// over the chunk's tiles, V[xi] and M[xi] blocked as [block][tile][lane].
// Weights transformed as above, packed per point for the direct tile.
std::vector<float> winograd_pack_block_weights(int m, const float* weights, int64_t outch, int64_t inch,
                                               int64_t block);
int64_t winograd_block_chunk_tiles(const WinogradGeometry& g, int64_t block);
int64_t winograd_block_scratch_floats(const WinogradGeometry& g, int64_t block);

// y (blocked, g.out_h x g.out_w) = bias + the 3x3 convolution of x; `bias`
// covers whole blocks (never null); `clamp` as WinogradKernel::output_blocks;
// epilogue(values, count) runs on finished spans of y (may be empty).
void conv2d_winograd_blocks(const Conv2dBlockedKernel& tile, const WinogradKernel& kern, const WinogradGeometry& g,
                            const float* packed_weights, const WinogradBlockSource& x, const float* bias,
                            const float* clamp, float* y, float* scratch,
                            const std::function<void(float*, int64_t)>& epilogue, const ParallelContext& ctx);

// y [outch][out_h][out_w] = bias + 3x3 convolution of x [inch][in_h][in_w]
// (already padded). post(out_channel, values, count) runs on finished output
// values (the fused activation); it may be empty.
void conv2d_winograd(const GemmKernel& gemm, const WinogradKernel& kern, const WinogradGeometry& g,
                     const float* packed_weights, const float* x, const float* bias, float* y, float* scratch,
                     const std::function<void(int64_t, float*, int64_t)>& post, const ParallelContext& ctx);

} // namespace kestrel
