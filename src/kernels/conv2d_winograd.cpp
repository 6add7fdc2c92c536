#include "kernels/conv2d_winograd.h"

#include <algorithm>
#include <cstring>

#include "kernels/conv2d_blocked.h"
#include "kernels/conv2d_gemm.h"
#include "kernels/isa.h"
#include "kernels/winograd_tables.h"
#include "kestrel/error.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(WinogradKernel, winograd)

namespace {

// u[xi] = (G g GT)[xi] for one 3x3 kernel g, in double.
template <class T> void transform_kernel(const float* g, float* u, int64_t point_stride)
{
    constexpr int A = T::alpha;
    double gg[A][3]; // G g
    for (int i = 0; i < A; ++i)
        for (int c = 0; c < 3; ++c)
            gg[i][c] = T::G[i][0] * g[c] + T::G[i][1] * g[3 + c] + T::G[i][2] * g[6 + c];
    for (int i = 0; i < A; ++i)
        for (int j = 0; j < A; ++j)
            u[(i * A + j) * point_stride] =
                static_cast<float>(gg[i][0] * T::G[j][0] + gg[i][1] * T::G[j][1] + gg[i][2] * T::G[j][2]);
}

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// u[xi][oc][ic]: every 3x3 kernel transformed.
std::vector<float> transformed_kernels(int m, const float* weights, int64_t outch, int64_t inch)
{
    check(m == 4 || m == 6, "internal: Winograd F(", m, ",3) is not implemented");
    const int alpha = m + 2, points = alpha * alpha;
    const int64_t matrix = outch * inch;
    std::vector<float> u(static_cast<size_t>(points * matrix));
    for (int64_t i = 0; i < matrix; ++i) {
        if (m == 4)
            transform_kernel<winograd::F43>(weights + i * 9, u.data() + i, matrix);
        else
            transform_kernel<winograd::F63>(weights + i * 9, u.data() + i, matrix);
    }
    return u;
}

} // namespace

std::vector<float> winograd_pack_weights(const GemmKernel& gemm, int m, const float* weights, int64_t outch,
                                         int64_t inch)
{
    const std::vector<float> u = transformed_kernels(m, weights, outch, inch);
    const int points = (m + 2) * (m + 2);
    const int64_t matrix = outch * inch;
    const int64_t per_point = gemm_packed_a_floats(gemm, outch, inch);
    std::vector<float> packed(static_cast<size_t>(points * per_point));
    for (int xi = 0; xi < points; ++xi)
        gemm_pack_a_into(gemm, u.data() + xi * matrix, outch, inch, inch, 1, packed.data() + xi * per_point);
    return packed;
}

int64_t winograd_chunk_tiles(const GemmKernel& gemm, const WinogradGeometry& g)
{
    // V and M of a chunk within about 4 MiB: the GEMMs find V in L2 and the
    // transforms M in L3, while U streams once per chunk.
    constexpr int64_t kChunkFloats = int64_t(1) << 20;
    const int64_t per_tile = int64_t(g.alpha()) * g.alpha() * (g.inch + g.outch), half = gemm.nr / 2;
    const int64_t chunk = std::max<int64_t>(gemm.nr, kChunkFloats / per_tile / gemm.nr * gemm.nr);
    return std::min(chunk, round_up(g.tiles(), half));
}

int64_t winograd_scratch_floats(const GemmKernel& gemm, const WinogradGeometry& g)
{
    const int64_t chunk = winograd_chunk_tiles(gemm, g);
    return int64_t(g.alpha()) * g.alpha() * (round_up(chunk, gemm.nr) * g.inch + chunk * g.outch);
}

int winograd_pick_tile(const GemmKernel& gemm, int64_t inch, int64_t outch, int64_t out_h, int64_t out_w)
{
    // Costs in GEMM multiply-adds, measured on AVX-512 (docs/benchmarks.md):
    // a transformed value costs about 40 of them (gather, transform, scatter),
    // a weight byte streamed from memory about 4, a value of the direct
    // GEMM's packed columns (9 * inch per output pixel, unless read in place)
    // about 8 (a layer with 16 outputs from 512 channels on 37x37 ran 1.5x
    // faster by Winograd, which this term makes it choose).
    constexpr double kTransformCost = 40, kWeightByteCost = 4, kPackedValueCost = 8;
    const double channels = double(inch) * outch, columns = double(round_up(out_h * out_w, gemm.nr));
    const double packing = conv2d_gemm_reads_in_place(9 * inch) ? 0 : kPackedValueCost * 9 * inch * columns;
    double best = columns * 9 * channels + kWeightByteCost * 9 * 4 * channels + packing;
    int pick = 0;
    for (int m : {4, 6}) {
        const WinogradGeometry g{m, inch, outch, out_h + 2, out_w + 2, out_h, out_w};
        const double points = g.alpha() * g.alpha(), cols = double(round_up(g.tiles(), gemm.nr / 2));
        const double cost = points * cols * channels + kTransformCost * points * cols * (inch + outch) +
                            kWeightByteCost * points * 4 * channels;
        if (cost < best) best = cost, pick = m;
    }
    return pick;
}

namespace {

// n <= 6 values of a tile's output row: a whole row as one fixed-size copy.
inline void copy_row(const float* src, int n, float* dst)
{
    if (n == 6) return static_cast<void>(std::memcpy(dst, src, 6 * sizeof(float)));
    if (n == 4) return static_cast<void>(std::memcpy(dst, src, 4 * sizeof(float)));
    for (int c = 0; c < n; ++c) dst[c] = src[c];
}

// One chunk of tiles [tile0, tile0 + cols) (cols a multiple of nr / 2, so a
// last half panel takes the GEMM's half tile): the three passes.
class WinogradChunk {
public:
    WinogradChunk(const GemmKernel& gemm, const WinogradKernel& kern, const WinogradGeometry& g, float* scratch,
                  int64_t tile0, int64_t cols)
        : gemm_(gemm), kern_(kern), g_(g), tile0_(tile0), cols_(cols), v_cols_(round_up(cols, gemm.nr)),
          points_(g.alpha() * g.alpha()), v_(scratch), m_(scratch + points_ * v_cols_ * g.inch)
    {
    }

    // V[xi]: panels of nr tiles (the last one perhaps half used),
    // v[((xi * panels + p) * inch + ic) * nr + j].
    void transform_input(const float* x, const ParallelContext& ctx) const
    {
        const int64_t plane = g_.in_h * g_.in_w, point = v_cols_ * g_.inch, nr = gemm_.nr;
        ctx.parallel_for(g_.inch, [&](int64_t begin, int64_t end) {
            for (int64_t ic = begin; ic < end; ++ic)
                for (int64_t j = 0; j < cols_; j += kern_.lanes)
                    kern_.input(g_, x + ic * plane, tile0_ + j, v_ + (j / nr * g_.inch + ic) * nr + j % nr, point);
        });
    }

    // M[xi] (outch x cols, row-major) = U[xi] V[xi], a task per (xi, A panel).
    void multiply(const float* packed_weights, const ParallelContext& ctx) const
    {
        const int64_t mr = gemm_.mr, nr = gemm_.nr, inch = g_.inch;
        const int64_t a_panels = (g_.outch + mr - 1) / mr, per_point = gemm_packed_a_floats(gemm_, g_.outch, inch);
        ctx.parallel_for(points_ * a_panels, [&](int64_t begin, int64_t end) {
            for (int64_t task = begin; task < end; ++task) {
                const int64_t xi = task / a_panels, row0 = task % a_panels * mr;
                const int rows = static_cast<int>(std::min(mr, g_.outch - row0));
                const float* a = packed_weights + xi * per_point + row0 * inch;
                const float* v = v_ + xi * v_cols_ * inch;
                float* c = m_ + (xi * g_.outch + row0) * cols_;
                for (int64_t j0 = 0; j0 < cols_; j0 += nr) {
                    const int64_t w = std::min(nr, cols_ - j0);
                    gemm_.panel(inch, a, nullptr, GemmPanel{v + j0 * inch, nr}, GemmStart::Zero, nullptr, c + j0,
                                cols_, rows, static_cast<int>(w), nullptr);
                }
            }
        });
    }

    // Y = AT M A + bias, the activation, and the tiles' values into y.
    void transform_output(const float* bias, float* y, const std::function<void(int64_t, float*, int64_t)>& post,
                          const ParallelContext& ctx) const
    {
        const int m = g_.m, lanes = kern_.lanes;
        const int64_t tiles = g_.tiles(), tiles_w = g_.tiles_w(), plane = g_.out_h * g_.out_w;
        const int64_t count = std::min(cols_, tiles - tile0_);
        ctx.parallel_for(g_.outch, [&](int64_t begin, int64_t end) {
            float out[16 * 6 * kWinogradOutRow];
            for (int64_t oc = begin; oc < end; ++oc)
                for (int64_t j = 0; j < count; j += lanes) {
                    kern_.output(g_, m_ + oc * cols_ + j, g_.outch * cols_, bias ? bias[oc] : 0.f, out);
                    if (post) post(oc, out, int64_t(lanes) * m * kWinogradOutRow);
                    for (int l = 0; l < lanes && j + l < count; ++l) {
                        const int64_t t = tile0_ + j + l, y0 = t / tiles_w * m, x0 = t % tiles_w * m;
                        const int rows = static_cast<int>(std::min<int64_t>(m, g_.out_h - y0));
                        const int cols = static_cast<int>(std::min<int64_t>(m, g_.out_w - x0));
                        float* dst = y + oc * plane + y0 * g_.out_w + x0;
                        const float* tile = out + l * m * kWinogradOutRow;
                        for (int r = 0; r < rows; ++r) copy_row(tile + r * kWinogradOutRow, cols, dst + r * g_.out_w);
                    }
                }
        });
    }

private:
    const GemmKernel& gemm_;
    const WinogradKernel& kern_;
    const WinogradGeometry& g_;
    int64_t tile0_, cols_, v_cols_; // v_cols_: cols_ rounded up to whole panels
    int points_;
    float* v_;
    float* m_;
};

} // namespace

std::vector<float> winograd_pack_block_weights(int m, const float* weights, int64_t outch, int64_t inch,
                                               int64_t block)
{
    const std::vector<float> u = transformed_kernels(m, weights, outch, inch);
    const int points = (m + 2) * (m + 2);
    const int64_t matrix = outch * inch;
    std::vector<float> packed;
    for (int xi = 0; xi < points; ++xi) {
        const std::vector<float> point = pack_conv2d_blocked_weights(u.data() + xi * matrix, outch, inch, 1, block);
        packed.insert(packed.end(), point.begin(), point.end());
    }
    return packed;
}

namespace {

// Floats of V and M per tile on blocks.
int64_t block_floats_per_tile(const WinogradGeometry& g, int64_t block)
{
    return int64_t(g.alpha()) * g.alpha() * (round_up(g.inch, block) + round_up(g.outch, block));
}

} // namespace

int64_t winograd_block_chunk_tiles(const WinogradGeometry& g, int64_t block)
{
    // V and M of a chunk within about 4 MiB, as on planes, but at least
    // kMinTiles tiles: each transformed weight streamed per chunk is used
    // once per tile (512 channels in and out, F(6,3): 64 MiB of them).
    constexpr int64_t kChunkFloats = int64_t(1) << 20, kMinTiles = 48;
    return std::min(g.tiles(), std::max(kMinTiles, kChunkFloats / block_floats_per_tile(g, block)));
}

int64_t winograd_block_scratch_floats(const WinogradGeometry& g, int64_t block)
{
    // V and M, then zeros for the products' bias.
    return winograd_block_chunk_tiles(g, block) * block_floats_per_tile(g, block) + round_up(g.outch, block);
}

void conv2d_winograd_blocks(const Conv2dBlockedKernel& tile, const WinogradKernel& kern, const WinogradGeometry& g,
                            const float* packed_weights, const WinogradBlockSource& x, const float* bias,
                            const float* clamp, float* y, float* scratch,
                            const std::function<void(float*, int64_t)>& epilogue, const ParallelContext& ctx)
{
    const int64_t block = kern.lanes;
    check(tile.block == block, "internal: Winograd's ", block, " lanes differ from the direct tile's block ",
          tile.block);
    const int points = g.alpha() * g.alpha();
    const int64_t in_blocks = (g.inch + block - 1) / block, out_blocks = (g.outch + block - 1) / block;
    const int64_t per_point = out_blocks * g.inch * block; // packed weights of one point
    const int64_t tiles = g.tiles(), chunk = winograd_block_chunk_tiles(g, block);
    float* zeros = scratch + chunk * block_floats_per_tile(g, block);
    std::fill(zeros, zeros + out_blocks * block, 0.f);
    const int64_t in_plane = x.h * x.w * block, out_plane = g.out_h * g.out_w * block;
    for (int64_t t0 = 0; t0 < tiles; t0 += chunk) {
        const int64_t cols = std::min(chunk, tiles - t0);
        // V[xi] = [in block][tile][lane], M[xi] = [out block][tile][lane].
        float* v = scratch;
        float* mm = scratch + points * in_blocks * cols * block;
        const int64_t v_point = in_blocks * cols * block, m_point = out_blocks * cols * block;
        ctx.parallel_for(in_blocks * cols, [&](int64_t begin, int64_t end) {
            for (int64_t u = begin; u < end; ++u) {
                const int64_t cb = u / cols, j = u % cols;
                WinogradBlockSource src = x;
                src.plane = x.plane + cb * in_plane;
                kern.input_blocks(g, src, t0 + j, v + (cb * cols + j) * block, v_point);
            }
        });
        // Each point's product: a 1x1 convolution of the chunk's tiles, by pairs of output blocks.
        const int64_t pairs = (out_blocks + 1) / 2;
        ctx.parallel_for(points * pairs, [&](int64_t begin, int64_t end) {
            for (int64_t task = begin; task < end; ++task) {
                const int64_t xi = task / pairs, ob0 = task % pairs * 2;
                Conv2dBlockedProblem pr = pointwise_problem(g.inch, g.outch, cols);
                pr.x = v + xi * v_point, pr.x_blocked = true;
                pr.packed = packed_weights + xi * per_point, pr.bias = zeros;
                pr.y = mm + xi * m_point, pr.y_blocked = true;
                tile.run(pr, ob0, std::min(out_blocks, ob0 + 2), 0, cols);
            }
        });
        ctx.parallel_for(out_blocks * cols, [&](int64_t begin, int64_t end) {
            for (int64_t u = begin; u < end; ++u) {
                const int64_t ob = u / cols, j = u % cols;
                kern.output_blocks(g, mm + (ob * cols + j) * block, m_point, bias + ob * block, clamp,
                                   y + ob * out_plane, t0 + j);
                if (!epilogue) continue;
                // The tile's rows, each a span of the plane.
                const int64_t t = t0 + j, y0 = t / g.tiles_w() * g.m, x0 = t % g.tiles_w() * g.m;
                const int64_t w = std::min<int64_t>(g.m, g.out_w - x0);
                for (int64_t r = y0; r < std::min<int64_t>(y0 + g.m, g.out_h); ++r)
                    epilogue(y + ob * out_plane + (r * g.out_w + x0) * block, w * block);
            }
        });
    }
}

void conv2d_winograd(const GemmKernel& gemm, const WinogradKernel& kern, const WinogradGeometry& g,
                     const float* packed_weights, const float* x, const float* bias, float* y, float* scratch,
                     const std::function<void(int64_t, float*, int64_t)>& post, const ParallelContext& ctx)
{
    check(gemm.nr / 2 % kern.lanes == 0 && kern.lanes <= 16, "internal: Winograd lanes ", kern.lanes,
          " do not divide half the GEMM's ", gemm.nr, " columns");
    const int64_t tiles = g.tiles(), chunk = winograd_chunk_tiles(gemm, g);
    for (int64_t t0 = 0; t0 < tiles; t0 += chunk) {
        const WinogradChunk c(gemm, kern, g, scratch, t0, std::min(chunk, round_up(tiles - t0, gemm.nr / 2)));
        c.transform_input(x, ctx);
        c.multiply(packed_weights, ctx);
        c.transform_output(bias, y, post, ctx);
    }
}

} // namespace kestrel
