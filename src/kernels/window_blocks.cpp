// Windows over channel blocks spread over threads (window_blocks.h).
#include "kernels/window_blocks.h"

#include <algorithm>
#include <vector>

#include "core/thread_pool.h"

namespace kestrel {

namespace {

// A task's scratch (its padded rows, and its results for a planes
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

void windows_by_blocks(const Depthwise2dGeometry& g, int64_t channels, WindowReduce reduce, const float* block_weights,
                       const float* block_bias, const float* x, bool x_blocked, float* y, bool y_blocked,
                       const OutputSpanFn& epilogue, const ParallelContext& ctx)
{
    const DepthwiseKernel& kern = depthwise_kernel();
    const int64_t block = kern.block, blocks = (channels + block - 1) / block, taps = g.kh * g.kw;
    const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    // Row ranges per block: enough for the scratch bound, and for even shares
    // (40 channels in blocks of 16 would go 2 blocks and 1).
    const int64_t rows_fitting = rows_per_range(g, block, y_blocked);
    const int64_t chunks = even_chunks(blocks, g.out_h, (g.out_h + rows_fitting - 1) / rows_fitting, ctx.threads());
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
            const ChannelBlockIn from{in, in_plane, lanes, x_blocked};
            const ChannelBlockOut to{out, out_plane, lanes, y_blocked};
            if (reduce == WindowReduce::Max)
                kern.channels_max(rows, from, to, scratch.data());
            else
                kern.channels(rows, from, block_weights + b * block * taps, block_bias ? block_bias + b * block : nullptr,
                              to, scratch.data());
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

} // namespace kestrel
