// Convolutions reading or writing activations stored in channel blocks
// (Layout::ChannelBlocks), spread over the session's threads: the weights of
// depthwise windows by blocks (run by kernels/window_blocks.h), and one-group
// layers as tiles of pixels x output blocks (kernels/conv2d_blocked.h). Plain
// inputs and outputs are taken too, so a layer at the edge of a blocked
// chain converts on the way (the depthwise kernel's transposes; the direct
// tile's strided loads and stores).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/depthwise_conv2d.h"
#include "kernels/window_blocks.h"
#include "kernels/conv2d_blocked.h"
#include "kestrel/op.h"

namespace kestrel {

// A depthwise layer's weights as the block kernel reads them: every block of
// ceil(channels / block), [block][tap][channel in block], zero past `channels`.
std::vector<float> depthwise_block_weights(const float* weights, int64_t channels, int64_t taps, int64_t block);
// Its bias over the same blocks (zero past `channels`); empty without one.
std::vector<float> padded_block_bias(const float* bias, int64_t channels, int64_t block);

// problem.y = the convolution of problem.x, then the epilogue.
void conv2d_by_blocks(const Conv2dBlockedProblem& problem, const OutputSpanFn& epilogue, const ExecContext& ctx);

} // namespace kestrel
