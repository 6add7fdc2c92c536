// The direct convolution kernels on channel blocks (kernels/conv2d_blocked.h),
// every one this CPU runs, in all four layout pairs, against sums in double
// written here: 1x1 layers as one row and KxK windows with strides and
// dilations, channel counts off the block, row lengths off the tile,
// sub-ranges of blocks and pixels (nothing written outside them), padding
// lanes (never read on input: NaN there; zeros on output).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/conv2d_blocked.h"
#include "reference_conv.h"

namespace kestrel {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// A layer's geometry: the input as the kernel reads it (padding included).
struct ConvShape {
    int64_t in_ch, out_ch, in_h, in_w;
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;

    int64_t out_h() const { return (in_h - (kh - 1) * dh - 1) / sh + 1; }
    int64_t out_w() const { return (in_w - (kw - 1) * dw - 1) / sw + 1; }
    int64_t taps() const { return kh * kw; }
};

// A 1x1 layer over `pixels` pixels, as the op passes it: one row.
ConvShape pointwise(int64_t in_ch, int64_t out_ch, int64_t pixels) { return {in_ch, out_ch, 1, pixels}; }

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
void check_run(const Conv2dBlockedKernel& kern, const ConvShape& s, bool x_blocked, bool y_blocked, const Range& r,
               uint32_t seed, const float* clamp = nullptr)
{
    SCOPED_TRACE(::testing::Message() << kern.isa << " " << s.in_ch << "->" << s.out_ch << " on " << s.in_h << "x"
                                      << s.in_w << ", kernel " << s.kh << "x" << s.kw << " stride " << s.sh << "x"
                                      << s.sw << " dilation " << s.dh << "x" << s.dw << ", x "
                                      << (x_blocked ? "blocked" : "planes") << ", y "
                                      << (y_blocked ? "blocked" : "planes") << ", blocks [" << r.ob0 << ", " << r.ob1
                                      << ") pixels [" << r.p0 << ", " << r.p1 << ")" << (clamp ? " clamped" : ""));
    const int64_t B = kern.block, P = s.out_h() * s.out_w(), in_plane = s.in_h * s.in_w;
    const int64_t out_blocks = blocks_of(s.out_ch, B), taps = s.taps();
    const std::vector<float> x = conv_test::random_vector(s.in_ch * in_plane, seed);
    const std::vector<float> w = conv_test::random_vector(s.out_ch * s.in_ch * taps, seed + 1);
    std::vector<float> bias = conv_test::random_vector(out_blocks * B, seed + 2);
    std::fill(bias.begin() + s.out_ch, bias.end(), 0.f);
    const std::vector<float> packed = pack_conv2d_blocked_weights(w.data(), s.out_ch, s.in_ch, taps, B);
    const std::vector<float> xl = in_layout(x, s.in_ch, in_plane, B, x_blocked);
    std::vector<float> y(static_cast<size_t>((y_blocked ? out_blocks * B : s.out_ch) * P + 1), kNaN); // +1: a guard
    Conv2dBlockedProblem pr{};
    pr.x = xl.data(), pr.x_blocked = x_blocked, pr.in_ch = s.in_ch, pr.out_ch = s.out_ch;
    pr.in_h = s.in_h, pr.in_w = s.in_w, pr.out_h = s.out_h(), pr.out_w = s.out_w();
    pr.kh = s.kh, pr.kw = s.kw, pr.stride_h = s.sh, pr.stride_w = s.sw, pr.dilation_h = s.dh, pr.dilation_w = s.dw;
    pr.packed = packed.data(), pr.bias = bias.data(), pr.y = y.data(), pr.y_blocked = y_blocked, pr.clamp = clamp;
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
            const int64_t oy = p / s.out_w(), ox = p % s.out_w();
            double want = bias[o], scale = std::fabs(bias[o]);
            for (int64_t c = 0; c < s.in_ch; ++c)
                for (int64_t ky = 0; ky < s.kh; ++ky)
                    for (int64_t kx = 0; kx < s.kw; ++kx) {
                        const int64_t iy = oy * s.sh + ky * s.dh, ix = ox * s.sw + kx * s.dw;
                        const double t = static_cast<double>(w[(o * s.in_ch + c) * taps + ky * s.kw + kx]) *
                                         x[c * in_plane + iy * s.in_w + ix];
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

void check_all_layouts(const Conv2dBlockedKernel& kern, const ConvShape& s, const Range& r, uint32_t& seed)
{
    for (bool x_blocked : {true, false})
        for (bool y_blocked : {true, false}) check_run(kern, s, x_blocked, y_blocked, r, seed += 3);
}

Range whole(const Conv2dBlockedKernel& kern, const ConvShape& s)
{
    return {0, blocks_of(s.out_ch, kern.block), 0, s.out_h() * s.out_w()};
}

// Channel counts off the block (and under it), pixel counts off every tile
// size, MobileNet's and EfficientNet's layer shapes.
const ConvShape kPointwiseShapes[] = {
        pointwise(3, 17, 7),      pointwise(17, 3, 13),     pointwise(24, 40, 49),     pointwise(40, 24, 1),
        pointwise(1, 1, 5),       pointwise(96, 144, 196),  pointwise(144, 96, 13),    pointwise(960, 17, 7),
        pointwise(17, 960, 3),    pointwise(576, 96, 196),  pointwise(960, 320, 49),   pointwise(144, 32, 3136),
        pointwise(32, 192, 3136), pointwise(16, 16, 29),    pointwise(8, 8, 100),
};

// KxK windows (inputs already padded): ResNet's 3x3 layers and its 7x7
// stride-2 first layer on 3 planes, stride-2 3x3 and 1x1 layers, dilations,
// non-square kernels, rows shorter and longer than the tiles, channel counts
// off the block.
const ConvShape kWindowShapes[] = {
        {64, 64, 16, 16, 3, 3},          {3, 64, 37, 37, 7, 7, 2, 2},     {32, 40, 17, 17, 3, 3, 2, 2},
        {24, 48, 14, 14, 1, 1, 2, 2},    {17, 19, 9, 30, 3, 3},           {20, 33, 13, 11, 3, 3, 1, 1, 2, 2},
        {16, 24, 9, 9, 1, 5},            {5, 7, 12, 8, 5, 1, 1, 2},       {96, 32, 9, 9, 3, 3},
        {8, 8, 3, 3, 3, 3},              {40, 16, 25, 3, 3, 3, 2, 1, 1, 1},
};

TEST(Conv2dBlocked, EveryKernelMatchesDoubleSumsOnOneByOneLayers)
{
    uint32_t seed = 1;
    int n = 0;
    for (const Conv2dBlockedKernel* kern : conv2d_blocked_kernels_available())
        for (const ConvShape& s : kPointwiseShapes) {
            check_all_layouts(*kern, s, whole(*kern, s), seed);
            ++n;
        }
    EXPECT_GE(n, 15);
    EXPECT_EQ(&conv2d_blocked_kernel(), conv2d_blocked_kernels_available().back());
}

TEST(Conv2dBlocked, EveryKernelMatchesDoubleSumsOnWindows)
{
    uint32_t seed = 101;
    for (const Conv2dBlockedKernel* kern : conv2d_blocked_kernels_available())
        for (const ConvShape& s : kWindowShapes) check_all_layouts(*kern, s, whole(*kern, s), seed);
}

// ReLU6-like bounds applied as the tile stores (sums land on both sides of them).
TEST(Conv2dBlocked, ClampedSumsMatchClampedDoubleSums)
{
    const float bounds[2] = {-0.25f, 0.5f};
    uint32_t seed = 17;
    for (const Conv2dBlockedKernel* kern : conv2d_blocked_kernels_available())
        for (const ConvShape& s : {pointwise(24, 40, 49), pointwise(17, 3, 13), ConvShape{17, 19, 9, 30, 3, 3}})
            for (bool x_blocked : {true, false})
                for (bool y_blocked : {true, false})
                    check_run(*kern, s, x_blocked, y_blocked, whole(*kern, s), seed += 3, bounds);
}

TEST(Conv2dBlocked, SubRangesWriteOnlyTheirOutputs)
{
    uint32_t seed = 5;
    for (const Conv2dBlockedKernel* kern : conv2d_blocked_kernels_available()) {
        const ConvShape s = pointwise(40, 144, 196);
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
        const ConvShape t = pointwise(17, 38, 49);
        const int64_t tb = blocks_of(t.out_ch, kern->block);
        check_all_layouts(*kern, t, {tb - 1, tb, 5, 44}, seed);
        // A window's pixel range starting and ending inside rows (14 x 14 outputs).
        const ConvShape u{20, 40, 16, 16, 3, 3};
        check_all_layouts(*kern, u, {0, blocks_of(u.out_ch, kern->block), 9, 14 * 9 + 5}, seed);
    }
}

TEST(Conv2dBlocked, PackedWeightsArePanelsOfBlocks)
{
    // 5 outputs, 6 inputs (blocks of 4: 4 + 2 channels), 2 taps.
    const int64_t out_ch = 5, in_ch = 6, taps = 2, block = 4;
    std::vector<float> w(out_ch * in_ch * taps);
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i + 1);
    const std::vector<float> packed = pack_conv2d_blocked_weights(w.data(), out_ch, in_ch, taps, block);
    ASSERT_EQ(packed.size(), static_cast<size_t>(2 * in_ch * taps * block));
    for (int64_t ob = 0; ob < 2; ++ob)
        for (int64_t c = 0; c < in_ch; ++c)
            for (int64_t t = 0; t < taps; ++t)
                for (int64_t l = 0; l < block; ++l) {
                    // Channel block c / 4 starts at (c / 4) * 4 * taps vectors; within it [tap][channel].
                    const int64_t c0 = c / block * block, lanes = std::min(block, in_ch - c0);
                    const int64_t vec = c0 * taps + t * lanes + (c - c0), o = ob * block + l;
                    EXPECT_EQ(packed[(ob * in_ch * taps + vec) * block + l], o < out_ch ? w[(o * in_ch + c) * taps + t] : 0.f)
                            << "panel " << ob << " channel " << c << " tap " << t << " lane " << l;
                }
}

} // namespace
} // namespace kestrel
