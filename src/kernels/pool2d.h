// 2-D max and average pooling of float32 or int8 planes with ncnn's
// conventions (pads fold into a max as the lowest value; averages sum and
// divide in float): the fast kernel of the pooling op's common case, tested
// against the op's N-d reference (common/sliding_window.h). Windows that lie
// inside the input (and, for averages, wholly inside the counted range) take a
// loop without bounds checks.
#pragma once
#include <cstdint>

#include "kestrel/error.h"
#include "kestrel/parallel.h"
#include "kestrel/tensor.h"

namespace kestrel {

struct Pool2dGeometry {
    int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
    int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
    int64_t pad_top = 0, pad_left = 0; // padding before the input
    // Averages: the input-coordinate range whose taps count in the divisor.
    int64_t count_y0 = 0, count_y1 = 0, count_x0 = 0, count_x1 = 0;
    bool count_include_pad = false; // divide by kernel_h * kernel_w
};

// x (planes, in_h, in_w) -> y (planes, out_h, out_w); F32 or I8 for max, F32 for average.
void max_pool2d(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx);
void average_pool2d(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx);

// Max pooling of float channels held as planes or in channel blocks
// (Layout::ChannelBlocks) on either side, by blocks of channels (the same
// bits as max_pool2d); supported when the window fits the depthwise kernel.
bool max_pool2d_blocks_supported(const Pool2dGeometry& g);
void max_pool2d_blocks(const float* x, bool x_blocked, int64_t channels, const Pool2dGeometry& g, float* y,
                       bool y_blocked, const ParallelContext& ctx);

// Global pooling of float channels stored in channel blocks (Layout::ChannelBlocks:
// [ceil(channels/B)][pixels][B]) into y[channels]: each channel's maximum, or
// its sum from 0 in pixel order divided by the pixel count, as the planes'
// kernels take them (the same bits).
void global_pool_blocked(const float* x, int64_t channels, int64_t pixels, bool average, float* y,
                         const ParallelContext& ctx);

} // namespace kestrel
