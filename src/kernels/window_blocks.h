// Per-channel windows (depthwise convolution, max pooling) of channels held
// as planes or in channel blocks (Layout::ChannelBlocks), block by block on
// the depthwise kernel's `channels`/`channels_max` (kernels/depthwise_conv2d.h),
// spread over the session's threads. Large planes go in ranges of output rows,
// so a task's padded copy stays in L2; few blocks are split by rows too, so
// that every thread gets an even share.
#pragma once
#include <cstdint>
#include <functional>

#include "kernels/depthwise_conv2d.h"
#include "kestrel/error.h"
#include "kestrel/parallel.h"
#include "kestrel/tensor.h"

namespace kestrel {

// The last step over a finished span of output values (bias and sums done):
// a residual added, an activation. Blocked spans include the padding lanes.
using OutputSpanFn = std::function<void(float* values, int64_t count)>;

// x (channels planes, or blocked) -> y (the same), windows of `g` per channel:
// weighted sums (block_weights [block][tap][channel in block] and the bias
// over whole blocks, or none) or maxima (no weights).
void windows_by_blocks(const Depthwise2dGeometry& g, int64_t channels, WindowReduce reduce, const float* block_weights,
                       const float* block_bias, const float* x, bool x_blocked, float* y, bool y_blocked,
                       const OutputSpanFn& epilogue, const ParallelContext& ctx);

} // namespace kestrel
