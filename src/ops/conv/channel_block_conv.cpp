// Blocked convolutions over threads (channel_block_conv.h).
#include "ops/conv/channel_block_conv.h"

#include <algorithm>
#include <cstring>

namespace kestrel {

std::vector<float> depthwise_block_weights(const float* weights, int64_t channels, int64_t taps, int64_t block)
{
    const int64_t blocks = (channels + block - 1) / block;
    std::vector<float> packed(static_cast<size_t>(blocks * block * taps), 0.f);
    for (int64_t ch = 0; ch < channels; ++ch)
        for (int64_t t = 0; t < taps; ++t) packed[(ch / block * taps + t) * block + ch % block] = weights[ch * taps + t];
    return packed;
}

std::vector<float> padded_block_bias(const float* bias, int64_t channels, int64_t block)
{
    if (!bias) return {};
    std::vector<float> padded(static_cast<size_t>((channels + block - 1) / block * block), 0.f);
    std::copy(bias, bias + channels, padded.begin());
    return padded;
}

void depthwise_by_blocks(const Depthwise2dGeometry& g, int64_t channels, const float* block_weights,
                         const float* block_bias, const float* x, bool x_blocked, float* y, bool y_blocked,
                         const OutputSpanFn& epilogue, const ExecContext& ctx)
{
    const DepthwiseKernel& kern = depthwise_kernel();
    const int64_t block = kern.block, blocks = (channels + block - 1) / block, taps = g.kh * g.kw;
    const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    const size_t scratch_floats = static_cast<size_t>(g.block_scratch_floats(block));
    ctx.parallel_for(blocks, [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> scratch; // the thread's own, kept from call to call
        scratch.resize(std::max(scratch.size(), scratch_floats));
        for (int64_t b = begin; b < end; ++b) {
            // Block b starts at the same offset in both layouts.
            const int64_t lanes = std::min(block, channels - b * block);
            float* out = y + b * block * out_plane;
            kern.channels(g, ChannelBlockIn{x + b * block * in_plane, in_plane, lanes, x_blocked},
                          block_weights + b * block * taps, block_bias ? block_bias + b * block : nullptr,
                          ChannelBlockOut{out, out_plane, lanes, y_blocked}, scratch.data());
            if (epilogue) epilogue(out, (y_blocked ? block : lanes) * out_plane);
        }
    });
}

namespace {

// Pixels per task: a few hundred keep the input's rows for all output
// blocks in cache while they stream their weights.
constexpr int64_t kPixelsPerTask = 256;
// Output blocks per task: the AVX-512 and AVX2 tiles' two, each input value
// broadcast once for both.
constexpr int64_t kBlocksPerTask = 2;

} // namespace

void pointwise_by_blocks(const PointwiseProblem& problem, const OutputSpanFn& epilogue, const ExecContext& ctx)
{
    const PointwiseBlockedKernel& kern = pointwise_blocked_kernel();
    const int64_t block = kern.block, out_blocks = (problem.out_ch + block - 1) / block, pixels = problem.pixels;
    const int64_t groups = (out_blocks + kBlocksPerTask - 1) / kBlocksPerTask;
    // Enough tasks for every thread: pixel ranges split further when output blocks are few.
    int64_t chunks = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
    if (ctx.threads() > 1) chunks = std::max(chunks, std::min<int64_t>((2 * ctx.threads() + groups - 1) / groups, pixels));
    const int64_t per_chunk = (pixels + chunks - 1) / chunks;
    ctx.parallel_for(chunks * groups, [&](int64_t begin, int64_t end) {
        for (int64_t u = begin; u < end; ++u) {
            const int64_t ob0 = u % groups * kBlocksPerTask, ob1 = std::min(out_blocks, ob0 + kBlocksPerTask);
            const int64_t p0 = u / groups * per_chunk, p1 = std::min(pixels, p0 + per_chunk);
            if (p0 >= p1) continue;
            kern.run(problem, ob0, ob1, p0, p1);
            if (!epilogue) continue;
            for (int64_t ob = ob0; ob < ob1; ++ob) {
                if (problem.y_blocked) {
                    epilogue(problem.y + (ob * pixels + p0) * block, (p1 - p0) * block);
                    continue;
                }
                for (int64_t o = ob * block; o < std::min(problem.out_ch, (ob + 1) * block); ++o)
                    epilogue(problem.y + o * pixels + p0, p1 - p0);
            }
        }
    });
}

} // namespace kestrel
