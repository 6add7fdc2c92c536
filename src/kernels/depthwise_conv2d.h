// Depthwise 2-D convolution (one input plane, one kernel, one output plane per
// channel), one kernel per ISA. By planes (depthwise_conv2d_rows.h):
// vectorized along output rows, padding applied row by row in a few small
// buffers (never a padded copy of the plane), a stride along the rows taken by
// computing the row at stride 1 and keeping every stride-th value. By channel
// blocks (depthwise_conv2d_blocks.h): vectorized across channels, for small
// planes. Max pooling's windows take both paths too, with a maximum for the
// weighted sum.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace kestrel {

// Larger kernels, or kernels spanning more rows (with dilation and stride),
// take the op's plain loops.
constexpr int64_t kMaxDepthwiseTaps = 64;
constexpr int64_t kMaxDepthwiseRows = 64;
// Planes up to this size go by channel blocks, larger ones by rows: a
// block's padded copy of a 112x112 plane no longer fits in L2, and its rows
// fill vectors anyway. Both the input and the output plane count (a stride-2
// layer from 112x112 to 56x56 runs 1.3x faster by rows: the block's transpose
// of its input would cost more than its windows).
constexpr int64_t kMaxBlockedPlane = 64 * 64;

struct Depthwise2dGeometry {
    int64_t in_h = 0, in_w = 0;          // the input plane
    int64_t pad_top = 0, pad_left = 0;   // padding before it; after it, as far as the outputs read
    float pad_value = 0.f;
    int64_t out_h = 0, out_w = 0;
    int64_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;

    // The extent of the padded plane the outputs read.
    int64_t padded_h() const { return (out_h - 1) * stride_h + (kh - 1) * dilation_h + 1; }
    int64_t padded_w() const { return (out_w - 1) * stride_w + (kw - 1) * dilation_w + 1; }
    // Rows of padded_w() values kept while a plane is computed.
    int64_t cached_rows() const { return (kh - 1) * dilation_h + 1 + stride_h; }
    // Whether its planes go by channel blocks (kMaxBlockedPlane).
    bool blocked() const { return std::max(in_h * in_w, out_h * out_w) <= kMaxBlockedPlane; }
    // Floats of scratch a plane needs, and a block of `block` channels.
    int64_t scratch_floats() const;
    int64_t block_scratch_floats(int64_t block) const { return (padded_h() * padded_w() + out_h * out_w) * block; }
    bool supported() const { return kh * kw <= kMaxDepthwiseTaps && cached_rows() <= kMaxDepthwiseRows; }
};

// How a window's taps combine: the weighted sum from the bias in tap order
// (convolution, and average pooling with weights of 1: an add of x * 1 is the
// add of x), or the maximum (max pooling).
enum class WindowReduce { WeightedSum, Max };

// Where a block of channels is read or written: `lanes` planes `plane` floats
// apart (the block's channels past them read as 0 and are never written), or,
// `blocked`, one block of Layout::ChannelBlocks ([pixel][channel]: `plane`
// and `lanes` unused, every channel of the block read and written).
template <class T> struct ChannelBlockAt {
    T* data = nullptr;
    int64_t plane = 0;
    int64_t lanes = 0;
    bool blocked = false;
};
using ChannelBlockIn = ChannelBlockAt<const float>;
using ChannelBlockOut = ChannelBlockAt<float>;

struct DepthwiseKernel {
    const char* isa;
    // out[oy][ox] = bias + sum over (ky, kx) in order of weights[ky*kw + kx] *
    //   padded[oy*stride_h + ky*dilation_h][ox*stride_w + kx*dilation_w],
    // padded[r][c] = in[r - pad_top][c - pad_left] inside the plane, else pad_value.
    void (*plane)(const Depthwise2dGeometry& g, const float* in, const float* weights, float bias, float* out,
                  float* scratch);
    // The same sums for `block` channels at once, vectorized across them
    // (faster on small planes; the same bits): weights[tap * block + channel],
    // bias[channel] (`block` values, or none); scratch of
    // g.block_scratch_floats(block).
    int64_t block;
    void (*channels)(const Depthwise2dGeometry& g, ChannelBlockIn in, const float* weights, const float* bias,
                     ChannelBlockOut out, float* scratch);
    // Max pooling's windows over `block` channels the same way: each output
    // the maximum of its taps (padding reads pad_value, the lowest value).
    void (*channels_max)(const Depthwise2dGeometry& g, ChannelBlockIn in, ChannelBlockOut out, float* scratch);
    // Global pooling of `block` planes `in_plane` floats apart, vectorized
    // across them: out[channel] = the sum from 0 (or the maximum from the
    // first value) of its plane's n values in order, as a loop over each
    // plane would take them (the same bits).
    void (*whole_sums)(const float* in, int64_t in_plane, int64_t n, float* out);
    void (*whole_maxima)(const float* in, int64_t in_plane, int64_t n, float* out);
    // Max pooling's windows over one plane by rows (large planes), for
    // max_plane_supported(g); scratch of g.scratch_floats().
    void (*plane_max)(const Depthwise2dGeometry& g, const float* in, float* out, float* scratch);
};

// Whether plane_max takes g: square 2x2 or 3x3 windows without dilation, a
// stride of 1 or 2 along the rows.
inline bool max_plane_supported(const Depthwise2dGeometry& g)
{
    return g.kh == g.kw && (g.kh == 2 || g.kh == 3) && g.dilation_h == 1 && g.dilation_w == 1 &&
           (g.stride_w == 1 || g.stride_w == 2);
}

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const DepthwiseKernel& depthwise_kernel();
std::vector<const DepthwiseKernel*> depthwise_kernels_available();

// The channels per block of Layout::ChannelBlocks (declared for users in
// kestrel/op.h): the vector width of the kernels this CPU runs, since every
// kernel on channel blocks takes one vector per pixel.
int64_t channel_block();

} // namespace kestrel
