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

namespace {

// A depthwise task's scratch (its padded rows, and its results for a planes
// output) stays within this many floats: a large plane is taken in row
// ranges, never copied whole (a 160x160 block would take 3.3 MB per thread),
// and each range's copy stays in L2.
constexpr int64_t kTaskScratchFloats = int64_t(1) << 16;

// Output rows per range within kTaskScratchFloats (at least one).
int64_t rows_per_range(const Depthwise2dGeometry& g, int64_t block, bool y_blocked)
{
    const int64_t pw = g.padded_w(), span = (g.kh - 1) * g.dilation_h + 1;
    const int64_t per_row = (g.stride_h * pw + (y_blocked ? 0 : g.out_w)) * block;
    const int64_t fixed = (span - g.stride_h) * pw * block;
    return std::clamp<int64_t>((kTaskScratchFloats - fixed) / per_row, 1, std::max<int64_t>(g.out_h, 1));
}

// Row ranges per block: enough for the scratch bound, and more while the
// tasks are few and do not divide among the threads (parallel_for deals
// contiguous runs: 40 channels in blocks of 16 would go 2 blocks and 1).
int64_t row_chunks(int64_t blocks, int64_t rows, int64_t rows_fitting, int threads)
{
    int64_t chunks = (rows + rows_fitting - 1) / rows_fitting;
    while (threads > 1 && chunks < rows && blocks * chunks < 8 * threads && blocks * chunks % threads != 0) ++chunks;
    return std::max<int64_t>(chunks, 1);
}

// Output rows [oy0, oy1) of g as a geometry of their own: the input rows
// they read from `first_row` on (padding above them only when they reach
// above the plane).
Depthwise2dGeometry row_range(const Depthwise2dGeometry& g, int64_t oy0, int64_t oy1, int64_t& first_row)
{
    Depthwise2dGeometry r = g;
    const int64_t top = oy0 * g.stride_h - g.pad_top; // the first padded row read, in input rows
    first_row = std::max<int64_t>(0, top);
    r.pad_top = first_row - top;
    r.in_h = g.in_h - first_row;
    r.out_h = oy1 - oy0;
    return r;
}

} // namespace

void depthwise_by_blocks(const Depthwise2dGeometry& g, int64_t channels, const float* block_weights,
                         const float* block_bias, const float* x, bool x_blocked, float* y, bool y_blocked,
                         const OutputSpanFn& epilogue, const ExecContext& ctx)
{
    const DepthwiseKernel& kern = depthwise_kernel();
    const int64_t block = kern.block, blocks = (channels + block - 1) / block, taps = g.kh * g.kw;
    const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    const int64_t chunks = row_chunks(blocks, g.out_h, rows_per_range(g, block, y_blocked), ctx.threads());
    const int64_t rows_per_chunk = (g.out_h + chunks - 1) / chunks;
    int64_t unused = 0;
    const size_t scratch_floats =
        static_cast<size_t>((chunks == 1 ? g : row_range(g, 0, rows_per_chunk, unused)).block_scratch_floats(block));
    ctx.parallel_for(blocks * chunks, [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> scratch; // the thread's own, kept from call to call
        scratch.resize(std::max(scratch.size(), scratch_floats));
        for (int64_t u = begin; u < end; ++u) {
            const int64_t b = u / chunks, oy0 = u % chunks * rows_per_chunk, oy1 = std::min(g.out_h, oy0 + rows_per_chunk);
            if (oy0 >= oy1) continue;
            int64_t first_row = 0;
            const Depthwise2dGeometry rows = chunks == 1 ? g : row_range(g, oy0, oy1, first_row);
            // Block b starts at the same offset in both layouts; a row's pixels are W floats apart
            // when blocked, 1 in planes.
            const int64_t lanes = std::min(block, channels - b * block), pixel = y_blocked ? block : 1;
            const float* in = x + b * block * in_plane + first_row * g.in_w * (x_blocked ? block : 1);
            float* out = y + b * block * out_plane + oy0 * g.out_w * pixel;
            kern.channels(rows, ChannelBlockIn{in, in_plane, lanes, x_blocked}, block_weights + b * block * taps,
                          block_bias ? block_bias + b * block : nullptr, ChannelBlockOut{out, out_plane, lanes, y_blocked},
                          scratch.data());
            if (!epilogue) continue;
            const int64_t values = (oy1 - oy0) * g.out_w;
            if (y_blocked || chunks == 1) {
                epilogue(out, y_blocked ? values * block : lanes * out_plane);
                continue;
            }
            for (int64_t l = 0; l < lanes; ++l) epilogue(out + l * out_plane, values);
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

void conv2d_by_blocks(const Conv2dBlockedProblem& problem, const OutputSpanFn& epilogue, const ExecContext& ctx)
{
    const Conv2dBlockedKernel& kern = conv2d_blocked_kernel();
    const int64_t block = kern.block, out_blocks = (problem.out_ch + block - 1) / block;
    const int64_t pixels = problem.out_pixels();
    const int64_t groups = (out_blocks + kBlocksPerTask - 1) / kBlocksPerTask;
    // Enough tasks for every thread, in even shares (parallel_for deals them
    // in contiguous runs): pixel ranges split further while the tasks are few
    // and do not divide among the threads (960 -> 160 on 7x7: 5 block pairs
    // would go 3 and 2; 2 pixel ranges of 5 go 5 and 5).
    int64_t chunks = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
    const int64_t threads = ctx.threads();
    if (threads > 1) {
        chunks = std::max(chunks, std::min<int64_t>((2 * threads + groups - 1) / groups, pixels));
        while (chunks < pixels && chunks * groups < 8 * threads && chunks * groups % threads != 0) ++chunks;
    }
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

void pad_channels(const float* x, bool blocked, int64_t channels, int64_t h, int64_t w, int64_t top, int64_t left,
                  float value, float* padded, int64_t ph, int64_t pw, const ExecContext& ctx)
{
    const int64_t block = conv2d_blocked_kernel().block;
    // A blocked plane is one of B-wide pixels; planes are 1 wide.
    const int64_t planes = blocked ? (channels + block - 1) / block : channels, width = blocked ? block : 1;
    ctx.parallel_for(planes, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
            const float* src = x + c * h * w * width;
            float* dst = padded + c * ph * pw * width;
            std::fill(dst, dst + top * pw * width, value);
            for (int64_t r = 0; r < h; ++r) {
                float* row = dst + (top + r) * pw * width;
                std::fill(row, row + left * width, value);
                std::memcpy(row + left * width, src + r * w * width, sizeof(float) * w * width);
                std::fill(row + (left + w) * width, row + pw * width, value);
            }
            std::fill(dst + (top + h) * pw * width, dst + ph * pw * width, value);
        }
    });
}

} // namespace kestrel
