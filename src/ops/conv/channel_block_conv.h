// Convolutions reading or writing activations stored in channel blocks
// (Layout::ChannelBlocks), spread over the session's threads: depthwise
// windows block by block (kernels/depthwise_conv2d.h) and 1x1 layers as
// tiles of pixels x output blocks (kernels/pointwise_conv_blocked.h). Plain
// inputs and outputs are taken too, so a layer at the edge of a blocked
// chain converts on the way (the depthwise kernel's transposes; the 1x1
// tile's strided loads and stores).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/depthwise_conv2d.h"
#include "kernels/pointwise_conv_blocked.h"
#include "kestrel/op.h"

namespace kestrel {

// The last step over a finished span of output values (bias and sums done):
// a residual added, an activation. Blocked spans include the padding lanes.
using OutputSpanFn = std::function<void(float* values, int64_t count)>;

// A depthwise layer's weights as the block kernel reads them: every block of
// ceil(channels / block), [block][tap][channel in block], zero past `channels`.
std::vector<float> depthwise_block_weights(const float* weights, int64_t channels, int64_t taps, int64_t block);
// Its bias over the same blocks (zero past `channels`); empty without one.
std::vector<float> padded_block_bias(const float* bias, int64_t channels, int64_t block);

// x (channels planes, or blocked) -> y (the same), windows of `g` per channel.
void depthwise_by_blocks(const Depthwise2dGeometry& g, int64_t channels, const float* block_weights,
                         const float* block_bias, const float* x, bool x_blocked, float* y, bool y_blocked,
                         const OutputSpanFn& epilogue, const ExecContext& ctx);

// problem.y = the 1x1 convolution of problem.x, then the epilogue.
void pointwise_by_blocks(const PointwiseProblem& problem, const OutputSpanFn& epilogue, const ExecContext& ctx);

} // namespace kestrel
