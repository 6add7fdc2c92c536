// The int8 depthwise kernel on byte dot products (kernels/depthwise_int8.h)
// against the sums written out here: every kernel width it takes (1-4 taps a
// row), several heights, strides 1-4 along the rows and columns, dilations,
// output widths below, at and past a vector of 16, random bytes and weights.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/depthwise_int8.h"

namespace kestrel {
namespace {

std::vector<int32_t> reference_sums(const Depthwise2dGeometry& g, const std::vector<uint8_t>& padded,
                                    int64_t row_bytes, const std::vector<int8_t>& w, int32_t start)
{
    std::vector<int32_t> sums;
    for (int64_t oy = 0; oy < g.out_h; ++oy)
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
            int64_t sum = start;
            for (int64_t ky = 0; ky < g.kh; ++ky)
                for (int64_t kx = 0; kx < g.kw; ++kx)
                    sum += int64_t{w[static_cast<size_t>(ky * g.kw + kx)]} *
                           padded[static_cast<size_t>((oy * g.stride_h + ky * g.dilation_h) * row_bytes +
                                                      ox * g.stride_w + kx * g.dilation_w)];
            sums.push_back(static_cast<int32_t>(sum));
        }
    return sums;
}

TEST(DepthwiseInt8, SumsEqualTheReference)
{
    struct Case {
        int64_t kh, kw, stride_h, stride_w, dilation_h, dilation_w, out_h, out_w;
    };
    const Case cases[] = {{3, 3, 1, 1, 1, 1, 5, 16}, {3, 3, 2, 2, 1, 1, 4, 17}, {3, 3, 1, 1, 2, 2, 3, 33},
                          {5, 4, 1, 1, 1, 1, 2, 7},  {1, 1, 1, 4, 1, 1, 3, 40}, {2, 2, 2, 3, 1, 3, 3, 15},
                          {7, 1, 1, 1, 1, 1, 2, 50}, {4, 4, 4, 3, 1, 2, 2, 1}};
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> byte(0, 255), weight(-128, 127);
    int ran = 0;
    for (const Case& c : cases) {
        Depthwise2dGeometry g;
        g.kh = c.kh, g.kw = c.kw, g.stride_h = c.stride_h, g.stride_w = c.stride_w;
        g.dilation_h = c.dilation_h, g.dilation_w = c.dilation_w, g.out_h = c.out_h, g.out_w = c.out_w;
        g.in_h = g.padded_h(), g.in_w = g.padded_w();
        const DepthwiseInt8Kernel* kern = depthwise_int8_kernel(g);
        if (!kern) continue;
        SCOPED_TRACE(std::string(kern->isa) + " kernel " + std::to_string(c.kh) + "x" + std::to_string(c.kw) +
                     " stride " + std::to_string(c.stride_h) + "," + std::to_string(c.stride_w) + " dilation " +
                     std::to_string(c.dilation_h) + "," + std::to_string(c.dilation_w) + " out " +
                     std::to_string(c.out_h) + "x" + std::to_string(c.out_w));
        const int64_t row_bytes = depthwise_int8_row_bytes(g);
        std::vector<uint8_t> padded(static_cast<size_t>(g.padded_h() * row_bytes));
        for (uint8_t& b : padded) b = static_cast<uint8_t>(byte(rng));
        std::vector<int8_t> w(static_cast<size_t>(g.kh * g.kw));
        for (int8_t& v : w) v = static_cast<int8_t>(weight(rng));
        const int32_t start = -128 * 37;
        std::vector<int32_t> sums(static_cast<size_t>(g.out_h * g.out_w + 1), 12345);
        kern->plane(g, padded.data(), row_bytes, w.data(), start, sums.data());
        const std::vector<int32_t> want = reference_sums(g, padded, row_bytes, w, start);
        for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(sums[i], want[i]) << "output " << i;
        ASSERT_EQ(sums.back(), 12345) << "wrote past the plane";
        ++ran;
    }
    if (ran == 0) GTEST_SKIP() << "no int8 depthwise kernel on this CPU";
    EXPECT_EQ(ran, 8) << "every case fits the kernel's limits";
}

// What the kernel does not take falls to the float kernels: wider rows, strides past 4.
TEST(DepthwiseInt8, RefusesRowsItCannotGather)
{
    Depthwise2dGeometry g;
    g.kh = g.kw = 5;
    g.out_h = g.out_w = 4;
    EXPECT_EQ(depthwise_int8_kernel(g), nullptr);
    g.kw = 3, g.stride_w = 5;
    EXPECT_EQ(depthwise_int8_kernel(g), nullptr);
    g.stride_w = 4, g.dilation_w = 3; // 3 * 4 + 2 * 3 = 18 > 15
    EXPECT_EQ(depthwise_int8_kernel(g), nullptr);
}

} // namespace
} // namespace kestrel
