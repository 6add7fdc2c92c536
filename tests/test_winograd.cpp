// Winograd 3x3 convolution (kernels/conv2d_winograd.h): every transform kernel
// this CPU runs, with its ISA's GEMM tile, for F(4,3) and F(6,3), against sums
// in double written here; tiles cut by the plane's edges, tiles spread over
// vector lanes across tile rows, several chunks; the same bits at 1 and 3
// threads. And the Convolution layer: Winograd on and off (Net load options)
// agree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/conv2d_winograd.h"
#include "reference_conv.h"

namespace kestrel {
namespace {

ThreadPool& pool()
{
    static ThreadPool p(3);
    return p;
}

struct Case {
    int64_t inch, outch, h, w; // h, w: the (already padded) input plane
};

// Runs the kernel pair on a random layer; returns y (outch x out_h x out_w, one
// NaN guard value after it).
std::vector<float> run(const GemmKernel& gemm, const WinogradKernel& kern, int m, const Case& c,
                       const std::vector<float>& x, const std::vector<float>& wt, const std::vector<float>& bias,
                       int threads)
{
    WinogradGeometry g{m, c.inch, c.outch, c.h, c.w, c.h - 2, c.w - 2};
    const std::vector<float> packed = winograd_pack_weights(gemm, m, wt.data(), c.outch, c.inch);
    std::vector<float> scratch(static_cast<size_t>(winograd_scratch_floats(gemm, g)));
    std::vector<float> y(static_cast<size_t>(c.outch * g.out_h * g.out_w + 1), std::numeric_limits<float>::quiet_NaN());
    conv2d_winograd(gemm, kern, g, packed.data(), x.data(), bias.data(), y.data(), scratch.data(), {},
                    ExecContext(threads > 1 ? &pool() : nullptr, threads));
    return y;
}

void check_case(const GemmKernel& gemm, const WinogradKernel& kern, int m, const Case& c, uint32_t seed)
{
    SCOPED_TRACE(::testing::Message() << kern.isa << " F(" << m << ",3) inch=" << c.inch << " outch=" << c.outch
                                      << " in=" << c.h << "x" << c.w);
    const std::vector<float> x = conv_test::random_vector(c.inch * c.h * c.w, seed);
    const std::vector<float> wt = conv_test::random_vector(c.outch * c.inch * 9, seed + 1);
    const std::vector<float> bias = conv_test::random_vector(c.outch, seed + 2);
    const std::vector<float> y = run(gemm, kern, m, c, x, wt, bias, 1);
    const int64_t oh = c.h - 2, ow = c.w - 2;
    int bad = 0;
    double worst = 0;
    for (int64_t oc = 0; oc < c.outch; ++oc)
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
                double want = bias[oc], scale = std::fabs(bias[oc]);
                for (int64_t ic = 0; ic < c.inch; ++ic)
                    for (int ky = 0; ky < 3; ++ky)
                        for (int kx = 0; kx < 3; ++kx) {
                            const double t = static_cast<double>(wt[((oc * c.inch + ic) * 3 + ky) * 3 + kx]) *
                                             x[(ic * c.h + oy + ky) * c.w + ox + kx];
                            want += t;
                            scale += std::fabs(t);
                        }
                const double got = y[(oc * oh + oy) * ow + ox], err = std::fabs(got - want) / scale;
                worst = std::max(worst, err);
                // The transforms' rounding grows with the tile: F(6,3)'s
                // coefficients reach 32 and 21/4.
                if (!(err <= (m == 4 ? 4e-6 : 1.5e-5)) && ++bad <= 5)
                    ADD_FAILURE() << "y[" << oc << "][" << oy << "][" << ox << "] = " << got << ", expected " << want;
            }
    EXPECT_EQ(bad, 0) << "worst relative error " << worst;
    EXPECT_TRUE(std::isnan(y.back())) << "wrote past the output";
    const std::vector<float> y3 = run(gemm, kern, m, c, x, wt, bias, 3);
    EXPECT_TRUE(std::equal(y.begin(), y.end() - 1, y3.begin())) << "results depend on the thread count";
}

TEST(Winograd, EveryKernelMatchesDoubleSums)
{
    const Case cases[] = {
        {8, 8, 10, 10},     // one partial tile row and column
        {9, 13, 17, 23},    // channels off the GEMM tile, tiles cut at both edges
        {16, 24, 3, 3},     // a 1x1 output
        {5, 40, 35, 9},     // narrow planes: a vector of tiles spans several tile rows
        {32, 16, 58, 58},   // many tiles
        {40, 24, 100, 98},  // more tiles than one chunk holds
    };
    const std::vector<const GemmKernel*> gemms = gemm_kernels_available();
    const std::vector<const WinogradKernel*> kernels = winograd_kernels_available();
    ASSERT_EQ(gemms.size(), kernels.size());
    uint32_t seed = 1;
    for (size_t i = 0; i < kernels.size(); ++i)
        for (int m : {4, 6})
            for (const Case& c : cases) check_case(*gemms[i], *kernels[i], m, c, seed += 3);
}

TEST(Winograd, ChunksSplitLargePlanes)
{
    // The last case above must really take several chunks, or the test misses them.
    const GemmKernel& gemm = *gemm_kernels_available().front();
    for (int m : {4, 6}) {
        const WinogradGeometry g{m, 40, 24, 100, 98, 98, 96};
        EXPECT_LT(winograd_chunk_tiles(gemm, g), g.tiles());
    }
}

// On channel blocks (conv2d_winograd_blocks): the input's padding read in
// place (a pad value inside the layer's extent, 0 past it), channels off the
// block, a clamp and an epilogue, against the same double sums; the lanes
// past the output channels hold 0; the same bits at 1 and 3 threads.
struct BlockCase {
    int64_t inch, outch, h, w, pad; // h, w: the unpadded input
};

// Blocked [ceil(c/B)][h*w][B] from planes [c][h*w] (padding lanes NaN: never read).
std::vector<float> to_blocks(const std::vector<float>& planes, int64_t c, int64_t pixels, int64_t block)
{
    std::vector<float> b(static_cast<size_t>((c + block - 1) / block * pixels * block),
                         std::numeric_limits<float>::quiet_NaN());
    for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < pixels; ++p) b[((ch / block) * pixels + p) * block + ch % block] = planes[ch * pixels + p];
    return b;
}

std::vector<float> run_blocks(const Conv2dBlockedKernel& tile, const WinogradKernel& kern, int m, const BlockCase& c,
                              const std::vector<float>& xb, const std::vector<float>& wt,
                              const std::vector<float>& bias, const float* clamp, int threads)
{
    const int64_t block = kern.lanes, oh = c.h + 2 * c.pad - 2, ow = c.w + 2 * c.pad - 2;
    const WinogradGeometry g{m, c.inch, c.outch, c.h + 2 * c.pad, c.w + 2 * c.pad, oh, ow};
    const WinogradBlockSource src{xb.data(), c.h, c.w, c.pad, c.pad, g.in_h, g.in_w, 0.5f};
    const std::vector<float> packed = winograd_pack_block_weights(m, wt.data(), c.outch, c.inch, block);
    std::vector<float> scratch(static_cast<size_t>(winograd_block_scratch_floats(g, block)));
    const int64_t out_blocks = (c.outch + block - 1) / block;
    std::vector<float> padded_bias(static_cast<size_t>(out_blocks * block), 0.f);
    std::copy(bias.begin(), bias.end(), padded_bias.begin());
    std::vector<float> y(static_cast<size_t>(out_blocks * oh * ow * block + 1), std::numeric_limits<float>::quiet_NaN());
    const auto plus_one = [](float* v, int64_t n) {
        for (int64_t i = 0; i < n; ++i) v[i] += 1.f;
    };
    conv2d_winograd_blocks(tile, kern, g, packed.data(), src, padded_bias.data(), clamp, y.data(), scratch.data(),
                           plus_one, ExecContext(threads > 1 ? &pool() : nullptr, threads));
    return y;
}

void check_blocks(const Conv2dBlockedKernel& tile, const WinogradKernel& kern, int m, const BlockCase& c,
                  const float* clamp, uint32_t seed)
{
    SCOPED_TRACE(::testing::Message() << kern.isa << " blocks F(" << m << ",3) inch=" << c.inch << " outch=" << c.outch
                                      << " in=" << c.h << "x" << c.w << " pad=" << c.pad << (clamp ? " clamped" : ""));
    const int64_t block = kern.lanes, ph = c.h + 2 * c.pad, pw = c.w + 2 * c.pad, oh = ph - 2, ow = pw - 2;
    const std::vector<float> x = conv_test::random_vector(c.inch * c.h * c.w, seed);
    const std::vector<float> wt = conv_test::random_vector(c.outch * c.inch * 9, seed + 1);
    const std::vector<float> bias = conv_test::random_vector(c.outch, seed + 2);
    const std::vector<float> xb = to_blocks(x, c.inch, c.h * c.w, block);
    const std::vector<float> y = run_blocks(tile, kern, m, c, xb, wt, bias, clamp, 1);
    const auto input = [&](int64_t ic, int64_t py, int64_t px) {
        const int64_t iy = py - c.pad, ix = px - c.pad;
        return iy < 0 || iy >= c.h || ix < 0 || ix >= c.w ? 0.5 : double(x[(ic * c.h + iy) * c.w + ix]);
    };
    int bad = 0;
    double worst = 0;
    for (int64_t oc = 0; oc < (c.outch + block - 1) / block * block; ++oc)
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
                const double got = y[((oc / block * oh + oy) * ow + ox) * block + oc % block];
                if (oc >= c.outch) { // a padding lane: 0 plus the epilogue's 1
                    if (got != 1.0 && ++bad <= 5) ADD_FAILURE() << "padding lane " << oc << " holds " << got;
                    continue;
                }
                double want = bias[oc], scale = std::fabs(bias[oc]);
                for (int64_t ic = 0; ic < c.inch; ++ic)
                    for (int ky = 0; ky < 3; ++ky)
                        for (int kx = 0; kx < 3; ++kx) {
                            const double t = wt[((oc * c.inch + ic) * 3 + ky) * 3 + kx] * input(ic, oy + ky, ox + kx);
                            want += t;
                            scale += std::fabs(t);
                        }
                if (clamp) want = std::min<double>(std::max<double>(want, clamp[0]), clamp[1]);
                want += 1; // the epilogue
                const double err = std::fabs(got - want) / (scale + 1);
                worst = std::max(worst, err);
                if (!(err <= (m == 4 ? 4e-6 : 1.5e-5)) && ++bad <= 5)
                    ADD_FAILURE() << "y[" << oc << "][" << oy << "][" << ox << "] = " << got << ", expected " << want;
            }
    EXPECT_EQ(bad, 0) << "worst relative error " << worst;
    EXPECT_TRUE(std::isnan(y.back())) << "wrote past the output";
    const std::vector<float> y3 = run_blocks(tile, kern, m, c, xb, wt, bias, clamp, 3);
    EXPECT_TRUE(std::equal(y.begin(), y.end() - 1, y3.begin())) << "results depend on the thread count";
}

TEST(Winograd, BlockedKernelsMatchDoubleSums)
{
    const BlockCase cases[] = {
        {16, 16, 8, 8, 1},    // one tile row and column, padded
        {9, 13, 15, 21, 1},   // channels off the block, tiles cut at both edges
        {20, 40, 7, 5, 0},    // no padding: a 5x3 output
        {32, 24, 56, 30, 1},  // many tiles
        {8, 200, 76, 76, 1},  // more tiles than one chunk holds
    };
    const float relu6[2] = {0.f, 6.f};
    const std::vector<const Conv2dBlockedKernel*> tiles = conv2d_blocked_kernels_available();
    const std::vector<const WinogradKernel*> kernels = winograd_kernels_available();
    ASSERT_EQ(tiles.size(), kernels.size());
    uint32_t seed = 5;
    for (size_t i = 0; i < kernels.size(); ++i) {
        ASSERT_STREQ(tiles[i]->isa, kernels[i]->isa);
        for (int m : {4, 6})
            for (const BlockCase& c : cases) check_blocks(*tiles[i], *kernels[i], m, c, c.pad ? nullptr : relu6, seed += 3);
        check_blocks(*tiles[i], *kernels[i], 6, cases[1], relu6, seed += 3);
    }
    const WinogradGeometry large{6, 8, 200, 78, 78, 76, 76};
    EXPECT_LT(winograd_block_chunk_tiles(large, kernels.front()->lanes), large.tiles());
}

// The Convolution layer with Winograd (the default) against the direct GEMM
// (LoadOptions::winograd off): padding, bias, a fused activation.
TEST(Winograd, ConvolutionLayerMatchesDirectPath)
{
    const int64_t inch = 64, outch = 48, h = 41, w = 43;
    ASSERT_GT(winograd_pick_tile(gemm_kernel(), inch, outch, h, w), 0);
    const Tensor x = conv_test::random_tensor({inch, h, w}, 7);
    const Tensor wt = conv_test::random_tensor({outch * inch * 9}, 8);
    const Tensor bias = conv_test::random_tensor({outch}, 9);
    Tensor out[2];
    for (bool winograd : {false, true}) {
        Net net;
        LoadOptions lo;
        lo.winograd = winograd;
        net.set_load_options(lo);
        net.add_layer("Input", "in", {}, {"in"});
        net.add_layer("Convolution", "conv", {"in"}, {"out"},
                      conv_test::PD().i(0, outch).i(1, 3).i(4, 1).i(5, 1).i(6, outch * inch * 9).i(9, 1).pd, {wt, bias});
        net.finish_graph();
        Session s(net);
        s.set_input("in", x);
        out[winograd] = s.get("out");
    }
    ASSERT_EQ(out[0].shape(), out[1].shape());
    EXPECT_EQ(out[0].shape(), (Shape{outch, h, w}));
    // Within 1e-5 of the outputs' scale (sums of 576 products of values in [-1, 1]).
    float scale = 0;
    for (int64_t i = 0; i < out[0].numel(); ++i) scale = std::max(scale, std::fabs(out[0].data<float>()[i]));
    int differ = 0;
    for (int64_t i = 0; i < out[0].numel(); ++i) {
        const float a = out[0].data<float>()[i], b = out[1].data<float>()[i];
        EXPECT_NEAR(a, b, 1e-5f * scale) << i;
        differ += a != b;
    }
    EXPECT_GT(differ, 0) << "the two paths gave the same bits: was Winograd used at all?";
}

} // namespace
} // namespace kestrel
