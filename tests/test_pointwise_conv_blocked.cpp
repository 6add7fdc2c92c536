// The 1x1 convolution kernels on channel blocks (kernels/pointwise_conv_blocked.h),
// every one this CPU runs, in all four layout pairs, against sums in double
// written here: channel counts off the block, pixel counts off the tile,
// sub-ranges of blocks and pixels (nothing written outside them), padding
// lanes (never read on input: NaN there; zeros on output).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/pointwise_conv_blocked.h"
#include "reference_conv.h"

namespace kestrel {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct PointwiseShape {
    int64_t in_ch, out_ch, pixels;
};

int64_t blocks_of(int64_t ch, int64_t block) { return (ch + block - 1) / block; }

// Where value (c, p) of an activation lives in either layout.
int64_t index_of(int64_t c, int64_t p, int64_t pixels, int64_t block, bool blocked)
{
    return blocked ? ((c / block) * pixels + p) * block + c % block : c * pixels + p;
}

// The activation planes[c][p] in the kernel's layout; padding lanes NaN, so
// a kernel reading them as data gives NaN outputs.
std::vector<float> in_layout(const std::vector<float>& planes, int64_t ch, int64_t pixels, int64_t block, bool blocked)
{
    const int64_t n = blocked ? blocks_of(ch, block) * block * pixels : ch * pixels;
    std::vector<float> out(static_cast<size_t>(n), kNaN);
    for (int64_t c = 0; c < ch; ++c)
        for (int64_t p = 0; p < pixels; ++p) out[index_of(c, p, pixels, block, blocked)] = planes[c * pixels + p];
    return out;
}

struct Range {
    int64_t ob0, ob1, p0, p1;
};

// One run of `kern` over range r, checked everywhere: inside against the
// double sums (padding lanes of blocked outputs exactly 0), outside still NaN.
void check_run(const PointwiseBlockedKernel& kern, const PointwiseShape& s, bool x_blocked, bool y_blocked,
               const Range& r, uint32_t seed, const float* clamp = nullptr)
{
    SCOPED_TRACE(::testing::Message() << kern.isa << " " << s.in_ch << "->" << s.out_ch << " x " << s.pixels
                                      << " pixels, x " << (x_blocked ? "blocked" : "planes") << ", y "
                                      << (y_blocked ? "blocked" : "planes") << ", blocks [" << r.ob0 << ", " << r.ob1
                                      << ") pixels [" << r.p0 << ", " << r.p1 << ")"
                                      << (clamp ? " clamped" : ""));
    const int64_t B = kern.block, P = s.pixels, out_blocks = blocks_of(s.out_ch, B);
    const std::vector<float> x = conv_test::random_vector(s.in_ch * P, seed);
    const std::vector<float> w = conv_test::random_vector(s.out_ch * s.in_ch, seed + 1);
    std::vector<float> bias = conv_test::random_vector(out_blocks * B, seed + 2);
    std::fill(bias.begin() + s.out_ch, bias.end(), 0.f);
    const std::vector<float> packed = pack_pointwise_weights(w.data(), s.out_ch, s.in_ch, B);
    const std::vector<float> xl = in_layout(x, s.in_ch, P, B, x_blocked);
    std::vector<float> y(static_cast<size_t>((y_blocked ? out_blocks * B : s.out_ch) * P + 1), kNaN); // +1: a guard
    const PointwiseProblem pr{xl.data(), x_blocked, s.in_ch, s.out_ch, P, packed.data(),
                              bias.data(), y.data(), y_blocked, clamp};
    kern.run(pr, r.ob0, r.ob1, r.p0, r.p1);
    int bad = 0;
    const int64_t channels = y_blocked ? out_blocks * B : s.out_ch;
    for (int64_t o = 0; o < channels; ++o)
        for (int64_t p = 0; p < P; ++p) {
            const float got = y[index_of(o, p, P, B, y_blocked)];
            const bool inside = o / B >= r.ob0 && o / B < r.ob1 && p >= r.p0 && p < r.p1;
            if (!inside) {
                if (!std::isnan(got) && ++bad <= 5)
                    ADD_FAILURE() << "wrote y[" << o << "][" << p << "] outside the range";
                continue;
            }
            if (o >= s.out_ch) {
                if (got != 0.f && ++bad <= 5) ADD_FAILURE() << "padding lane y[" << o << "][" << p << "] = " << got;
                continue;
            }
            double want = bias[o], scale = std::fabs(bias[o]);
            for (int64_t c = 0; c < s.in_ch; ++c) {
                const double t = static_cast<double>(w[o * s.in_ch + c]) * x[c * P + p];
                want += t;
                scale += std::fabs(t);
            }
            if (clamp) want = std::min<double>(std::max<double>(want, clamp[0]), clamp[1]);
            if (!(std::fabs(got - want) <= 1e-6 * (scale + 1.0)) && ++bad <= 5)
                ADD_FAILURE() << "y[" << o << "][" << p << "] = " << got << ", expected " << want;
        }
    EXPECT_EQ(bad, 0);
    EXPECT_TRUE(std::isnan(y.back())) << "wrote past the output";
}

void check_all_layouts(const PointwiseBlockedKernel& kern, const PointwiseShape& s, const Range& r, uint32_t& seed)
{
    for (bool x_blocked : {true, false})
        for (bool y_blocked : {true, false}) check_run(kern, s, x_blocked, y_blocked, r, seed += 3);
}

// Channel counts off the block (and under it), pixel counts off every tile
// size, MobileNet's and EfficientNet's layer shapes.
const PointwiseShape kShapes[] = {
        {3, 17, 7},     {17, 3, 13},    {24, 40, 49},   {40, 24, 1},     {1, 1, 5},
        {96, 144, 196}, {144, 96, 13},  {960, 17, 7},   {17, 960, 3},    {576, 96, 196},
        {960, 320, 49}, {144, 32, 3136}, {32, 192, 3136}, {16, 16, 29},  {8, 8, 100},
};

TEST(PointwiseBlocked, EveryKernelMatchesDoubleSums)
{
    uint32_t seed = 1;
    int n = 0;
    for (const PointwiseBlockedKernel* kern : pointwise_blocked_kernels_available())
        for (const PointwiseShape& s : kShapes) {
            check_all_layouts(*kern, s, {0, blocks_of(s.out_ch, kern->block), 0, s.pixels}, seed);
            ++n;
        }
    EXPECT_GE(n, 15);
    EXPECT_EQ(&pointwise_blocked_kernel(), pointwise_blocked_kernels_available().back());
}

// ReLU6-like bounds applied as the tile stores (sums land on both sides of them).
TEST(PointwiseBlocked, ClampedSumsMatchClampedDoubleSums)
{
    const float bounds[2] = {-0.25f, 0.5f};
    uint32_t seed = 17;
    for (const PointwiseBlockedKernel* kern : pointwise_blocked_kernels_available())
        for (const PointwiseShape& s : {PointwiseShape{24, 40, 49}, PointwiseShape{17, 3, 13}})
            for (bool x_blocked : {true, false})
                for (bool y_blocked : {true, false})
                    check_run(*kern, s, x_blocked, y_blocked, {0, blocks_of(s.out_ch, kern->block), 0, s.pixels},
                              seed += 3, bounds);
}

TEST(PointwiseBlocked, SubRangesWriteOnlyTheirOutputs)
{
    uint32_t seed = 5;
    for (const PointwiseBlockedKernel* kern : pointwise_blocked_kernels_available()) {
        const PointwiseShape s{40, 144, 196};
        const int64_t nb = blocks_of(s.out_ch, kern->block);
        const Range ranges[] = {
                {1, nb - 1, 7, 150},   // inner blocks and pixels
                {nb - 1, nb, 0, 196},  // the last block alone (the narrow tile)
                {0, 3, 195, 196},      // three blocks (a wide and a narrow tile), one pixel
                {2, 5, 13, 14 + 13},   // pixels off the tile at both ends
                {1, 2, 50, 50},        // no pixels
                {3, 3, 0, 196},        // no blocks
        };
        for (const Range& r : ranges) check_all_layouts(*kern, s, r, seed);
        // Off-block channel counts: the last block's padding lanes in a sub-range.
        const PointwiseShape t{17, 38, 49};
        const int64_t tb = blocks_of(t.out_ch, kern->block);
        check_all_layouts(*kern, t, {tb - 1, tb, 5, 44}, seed);
    }
}

TEST(PointwiseBlocked, PackedWeightsArePanelsOfBlocks)
{
    const int64_t out_ch = 5, in_ch = 3, block = 4;
    std::vector<float> w(out_ch * in_ch);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i + 1);
    const std::vector<float> packed = pack_pointwise_weights(w.data(), out_ch, in_ch, block);
    ASSERT_EQ(packed.size(), static_cast<size_t>(2 * in_ch * block));
    for (int64_t ob = 0; ob < 2; ++ob)
        for (int64_t c = 0; c < in_ch; ++c)
            for (int64_t l = 0; l < block; ++l) {
                const int64_t o = ob * block + l;
                EXPECT_EQ(packed[(ob * in_ch + c) * block + l], o < out_ch ? w[o * in_ch + c] : 0.f)
                        << "panel " << ob << " channel " << c << " lane " << l;
            }
}

} // namespace
} // namespace kestrel
