// Blocked convolutions over threads (channel_block_conv.h).
#include "ops/conv/channel_block_conv.h"

#include <algorithm>

#include "core/thread_pool.h"

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

namespace {

// Pixels per task: a few hundred keep the input's rows for all output
// blocks in cache while they stream their weights.
constexpr int64_t kPixelsPerTask = 256;
// Output blocks per task: the AVX-512 and AVX2 tiles' two, each input value
// broadcast once for both.
constexpr int64_t kBlocksPerTask = 2;

} // namespace

void conv2d_by_blocks(const Conv2dBlockedProblem& problem, const OutputSpanFn& epilogue, const ExecContext& ctx)
{
    const Conv2dBlockedKernel& kern = conv2d_blocked_kernel();
    const int64_t block = kern.block, out_blocks = (problem.out_ch + block - 1) / block;
    const int64_t pixels = problem.out_pixels();
    const int64_t groups = (out_blocks + kBlocksPerTask - 1) / kBlocksPerTask;
    // Pixel ranges of kPixelsPerTask, at least two tasks per thread, and
    // even shares (960 -> 160 on 7x7: 5 block pairs would go 3 and 2; 2 pixel
    // ranges of 5 go 5 and 5).
    const int threads = ctx.threads();
    const int64_t min_chunks = std::max((pixels + kPixelsPerTask - 1) / kPixelsPerTask,
                                        threads > 1 ? (2 * threads + groups - 1) / groups : 1);
    const int64_t chunks = even_chunks(groups, pixels, min_chunks, threads);
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
