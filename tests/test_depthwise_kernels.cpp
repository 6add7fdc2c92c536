// The depthwise plane kernels (kernels/depthwise_conv2d.h), every one this CPU
// runs, against sums in double written here: strips of 4 vectors, single
// vectors and scalar tails, strides (phase-split rows), dilations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/depthwise_conv2d.h"
#include "reference_conv.h"

namespace kestrel {
namespace {

std::vector<float> random_values(int64_t n, uint32_t seed) { return conv_test::random_vector(n, seed); }

struct PlaneCase {
    int64_t h, w, kh, kw, sh, sw, dh, dw;
    int64_t pt = 0, pb = 0, pl = 0, pr = 0;
};

Depthwise2dGeometry geometry_of(const PlaneCase& c)
{
    Depthwise2dGeometry g;
    g.in_h = c.h, g.in_w = c.w, g.kh = c.kh, g.kw = c.kw;
    g.stride_h = c.sh, g.stride_w = c.sw, g.dilation_h = c.dh, g.dilation_w = c.dw;
    g.pad_top = c.pt, g.pad_left = c.pl, g.pad_value = 0.375f;
    g.out_h = (c.h + c.pt + c.pb - (c.kh - 1) * c.dh - 1) / c.sh + 1;
    g.out_w = (c.w + c.pl + c.pr - (c.kw - 1) * c.dw - 1) / c.sw + 1;
    return g;
}

void check_plane(const DepthwiseKernel& kern, const PlaneCase& c, uint32_t seed)
{
    SCOPED_TRACE(::testing::Message() << kern.isa << " in=" << c.h << "x" << c.w << " k=" << c.kh << "x" << c.kw
                                      << " s=" << c.sh << "x" << c.sw << " d=" << c.dh << "x" << c.dw << " pads="
                                      << c.pt << "," << c.pb << "," << c.pl << "," << c.pr);
    const Depthwise2dGeometry g = geometry_of(c);
    ASSERT_TRUE(g.supported());
    const std::vector<float> x = random_values(c.h * c.w, seed), wt = random_values(c.kh * c.kw, seed + 1);
    const float bias = random_values(1, seed + 2)[0];
    // One extra output value as a guard: the kernel must not write past the plane.
    std::vector<float> y(static_cast<size_t>(g.out_h * g.out_w + 1), std::numeric_limits<float>::quiet_NaN());
    std::vector<float> scratch(static_cast<size_t>(g.scratch_floats()));
    kern.plane(g, x.data(), wt.data(), bias, y.data(), scratch.data());
    int bad = 0;
    for (int64_t oy = 0; oy < g.out_h; ++oy)
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
            double want = bias, scale = std::fabs(bias);
            for (int64_t ky = 0; ky < c.kh; ++ky)
                for (int64_t kx = 0; kx < c.kw; ++kx) {
                    const int64_t iy = oy * c.sh + ky * c.dh - c.pt, ix = ox * c.sw + kx * c.dw - c.pl;
                    const bool inside = iy >= 0 && iy < c.h && ix >= 0 && ix < c.w;
                    const double t = static_cast<double>(wt[ky * c.kw + kx]) * (inside ? x[iy * c.w + ix] : g.pad_value);
                    want += t;
                    scale += std::fabs(t);
                }
            const float got = y[oy * g.out_w + ox];
            if (!(std::fabs(got - want) <= 1e-6 * (scale + 1.0)) && ++bad <= 5)
                ADD_FAILURE() << "out[" << oy << "][" << ox << "] = " << got << ", expected " << want;
        }
    EXPECT_EQ(bad, 0);
    EXPECT_TRUE(std::isnan(y.back())) << "wrote past the output plane";
}

const PlaneCase kCases[] = {
        {9, 99, 3, 3, 1, 1, 1, 1},  // strips of 4 vectors, single vectors and a tail at every width
        {11, 75, 3, 3, 2, 2, 1, 1}, // stride 2: phase-split rows
        {12, 40, 5, 5, 2, 2, 1, 1}, // 5x5 (MobileNetV3, EfficientNet)
        {14, 45, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2}, // 5x5 at stride 1, padded
        {10, 41, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1}, // stride 2 along the rows only
        {9, 22, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2},  // 5x5 rows narrower than a vector: half-width vectors
        {10, 50, 3, 3, 1, 1, 2, 3}, // dilations
        {7, 31, 2, 4, 3, 3, 1, 2},  // stride 3 with a dilated kernel
        {5, 3, 3, 3, 1, 1, 1, 1},   // a plane smaller than a vector
        {16, 16, 3, 3, 1, 1, 1, 1}, // rows narrower than a vector: the plane as one long row
        {15, 15, 3, 3, 2, 2, 1, 1}, // the same with strides
        {9, 12, 3, 2, 1, 3, 2, 1},  // and stride and dilation along one axis
        {6, 70, 1, 1, 1, 2, 1, 1},  // 1x1, stride along the rows only
        {8, 8, 8, 8, 1, 1, 1, 1},   // 64 taps, the most the kernels take
        // Padding: rows wholly padding, rows padded at one end or both, read
        // in place or copied; narrow planes padded too.
        {20, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        {21, 70, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1},
        {20, 66, 5, 5, 2, 2, 1, 1, 2, 1, 2, 1},
        {9, 40, 3, 3, 1, 1, 2, 2, 2, 2, 0, 3},
        {14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
        {7, 7, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2},
        {6, 30, 3, 3, 1, 1, 1, 1, 4, 4, 0, 0}, // more padding rows than input rows read
        {10, 48, 3, 3, 3, 1, 1, 1, 0, 0, 2, 0}, // stride along the columns only, padding on the left only
        {12, 12, 3, 3, 2, 2, 1, 1},             // the last row and column never read
};

// How a block's input and output are stored in check_block: planes (only
// `lanes` of them) or one block of Layout::ChannelBlocks.
struct BlockForm {
    bool in_blocked = false, out_blocked = false;
    int64_t lanes = -1; // -1: the whole block
};

// Channel blocks: bit for bit what the plane kernel (checked above) gives
// each channel, with gaps between the planes, or blocked; bias and none.
void check_block(const DepthwiseKernel& kern, const PlaneCase& c, uint32_t seed, bool with_bias, BlockForm form = {})
{
    const int64_t block = kern.block, taps = c.kh * c.kw, lanes = form.lanes < 0 ? block : form.lanes;
    SCOPED_TRACE(::testing::Message() << kern.isa << " block in=" << c.h << "x" << c.w << " k=" << c.kh << "x" << c.kw
                                      << " s=" << c.sh << "x" << c.sw << " d=" << c.dh << "x" << c.dw << " pads="
                                      << c.pt << "," << c.pb << "," << c.pl << "," << c.pr << " bias=" << with_bias
                                      << " blocked in/out=" << form.in_blocked << form.out_blocked << " lanes=" << lanes);
    const Depthwise2dGeometry g = geometry_of(c);
    const int64_t in_plane = c.h * c.w + 3, out_n = g.out_h * g.out_w, out_plane = out_n + 2;
    const std::vector<float> x = random_values(block * in_plane, seed), wt = random_values(block * taps, seed + 1);
    const std::vector<float> bias = random_values(block, seed + 2);
    std::vector<float> blocked_weights(static_cast<size_t>(block * taps));
    for (int64_t ch = 0; ch < block; ++ch)
        for (int64_t t = 0; t < taps; ++t) blocked_weights[t * block + ch] = wt[ch * taps + t];
    // The input as the kernel reads it: planes, or the same values as [pixel][channel].
    std::vector<float> x_blocked(static_cast<size_t>(block * c.h * c.w));
    for (int64_t ch = 0; ch < block; ++ch)
        for (int64_t i = 0; i < c.h * c.w; ++i) x_blocked[i * block + ch] = x[ch * in_plane + i];
    const ChannelBlockIn in = form.in_blocked ? ChannelBlockIn{x_blocked.data(), 0, 0, true}
                                              : ChannelBlockIn{x.data(), in_plane, lanes, false};
    // One guard value past a blocked output too.
    std::vector<float> y(static_cast<size_t>(block * out_plane), std::numeric_limits<float>::quiet_NaN());
    std::vector<float> scratch(static_cast<size_t>(g.block_scratch_floats(block)));
    kern.channels(g, in, blocked_weights.data(), with_bias ? bias.data() : nullptr,
                  ChannelBlockOut{y.data(), out_plane, lanes, form.out_blocked}, scratch.data());
    const auto got = [&](int64_t ch, int64_t i) { return form.out_blocked ? y[i * block + ch] : y[ch * out_plane + i]; };
    std::vector<float> want(static_cast<size_t>(out_n)), plane_scratch(static_cast<size_t>(g.scratch_floats()));
    const std::vector<float> zeros(static_cast<size_t>(in_plane), 0.f);
    int bad = 0;
    for (int64_t ch = 0; ch < block; ++ch) {
        // Planes past `lanes` are never written; read, they are zeros (a blocked
        // output holds their sums too).
        const bool exists = ch < lanes || form.in_blocked;
        if (ch >= lanes && !form.out_blocked) {
            for (int64_t i = 0; i < out_plane; ++i)
                EXPECT_TRUE(std::isnan(y[ch * out_plane + i])) << "channel " << ch << " past the lanes was written";
            continue;
        }
        kern.plane(g, exists ? x.data() + ch * in_plane : zeros.data(), wt.data() + ch * taps,
                   with_bias ? bias[ch] : 0.f, want.data(), plane_scratch.data());
        for (int64_t i = 0; i < out_n; ++i) {
            const float value = got(ch, i);
            if (std::memcmp(&want[i], &value, sizeof(float)) != 0 && ++bad <= 5)
                ADD_FAILURE() << "channel " << ch << " out[" << i << "] = " << value << ", the plane kernel " << want[i];
        }
        if (form.out_blocked) continue;
        for (int64_t i = out_n; i < out_plane; ++i)
            EXPECT_TRUE(std::isnan(y[ch * out_plane + i])) << "channel " << ch << ": wrote past its plane";
    }
    if (form.out_blocked) {
        EXPECT_TRUE(std::isnan(y[out_n * block])) << "wrote past the blocked output";
    }
    EXPECT_EQ(bad, 0);
}

// The maximum of output (oy, ox)'s window over `plane` in a plain loop, from
// the lowest value (padding is the lowest value).
float plain_window_max(const float* plane, const PlaneCase& c, float lowest, int64_t oy, int64_t ox)
{
    float m = lowest;
    for (int64_t ky = 0; ky < c.kh; ++ky)
        for (int64_t kx = 0; kx < c.kw; ++kx) {
            const int64_t iy = oy * c.sh + ky * c.dh - c.pt, ix = ox * c.sw + kx * c.dw - c.pl;
            if (iy >= 0 && iy < c.h && ix >= 0 && ix < c.w) m = std::max(m, plane[iy * c.w + ix]);
        }
    return m;
}

// Max pooling's windows by channel blocks against a plain loop.
void check_block_max(const DepthwiseKernel& kern, const PlaneCase& c, uint32_t seed)
{
    SCOPED_TRACE(::testing::Message() << kern.isa << " block max in=" << c.h << "x" << c.w << " k=" << c.kh << "x"
                                      << c.kw << " s=" << c.sh << "x" << c.sw << " d=" << c.dh << "x" << c.dw);
    Depthwise2dGeometry g = geometry_of(c);
    g.pad_value = -std::numeric_limits<float>::max();
    const int64_t block = kern.block, in_plane = c.h * c.w + 1, out_n = g.out_h * g.out_w, out_plane = out_n + 1;
    const std::vector<float> x = random_values(block * in_plane, seed);
    std::vector<float> y(static_cast<size_t>(block * out_plane), std::numeric_limits<float>::quiet_NaN());
    std::vector<float> scratch(static_cast<size_t>(g.block_scratch_floats(block)));
    kern.channels_max(g, {x.data(), in_plane, block}, {y.data(), out_plane, block}, scratch.data());
    int bad = 0;
    for (int64_t ch = 0; ch < block; ++ch) {
        for (int64_t oy = 0; oy < g.out_h; ++oy)
            for (int64_t ox = 0; ox < g.out_w; ++ox) {
                const float want = plain_window_max(x.data() + ch * in_plane, c, g.pad_value, oy, ox);
                const float got = y[ch * out_plane + oy * g.out_w + ox];
                if (got != want && ++bad <= 5)
                    ADD_FAILURE() << "channel " << ch << " out[" << oy << "][" << ox << "] = " << got << ", expected " << want;
            }
        EXPECT_TRUE(std::isnan(y[ch * out_plane + out_n])) << "channel " << ch << ": wrote past its plane";
    }
    EXPECT_EQ(bad, 0);
}

// Max pooling's windows by rows (plane_max) against the same loop.
void check_plane_max(const DepthwiseKernel& kern, const PlaneCase& c, uint32_t seed)
{
    SCOPED_TRACE(::testing::Message() << kern.isa << " plane max in=" << c.h << "x" << c.w << " k=" << c.kh << "x"
                                      << c.kw << " s=" << c.sh << "x" << c.sw << " pads=" << c.pt << "," << c.pb << ","
                                      << c.pl << "," << c.pr);
    Depthwise2dGeometry g = geometry_of(c);
    g.pad_value = -std::numeric_limits<float>::max();
    ASSERT_TRUE(max_plane_supported(g) && g.supported());
    const std::vector<float> x = random_values(c.h * c.w, seed);
    std::vector<float> y(static_cast<size_t>(g.out_h * g.out_w + 1), std::numeric_limits<float>::quiet_NaN());
    std::vector<float> scratch(static_cast<size_t>(g.scratch_floats()));
    kern.plane_max(g, x.data(), y.data(), scratch.data());
    int bad = 0;
    for (int64_t oy = 0; oy < g.out_h; ++oy)
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
            const float want = plain_window_max(x.data(), c, g.pad_value, oy, ox), got = y[oy * g.out_w + ox];
            if (got != want && ++bad <= 5)
                ADD_FAILURE() << "out[" << oy << "][" << ox << "] = " << got << ", expected " << want;
        }
    EXPECT_EQ(bad, 0);
    EXPECT_TRUE(std::isnan(y.back())) << "wrote past the output plane";
}

TEST(DepthwiseKernels, EveryKernelMatchesDoubleSums)
{
    const auto& cases = kCases;
    uint32_t seed = 1;
    int n = 0;
    for (const DepthwiseKernel* kern : depthwise_kernels_available())
        for (const PlaneCase& c : cases) {
            check_plane(*kern, c, seed += 3);
            ++n;
        }
    EXPECT_GE(n, 8);
    EXPECT_EQ(&depthwise_kernel(), depthwise_kernels_available().back());
}

TEST(DepthwiseKernels, ChannelBlocksMatchThePlaneKernel)
{
    uint32_t seed = 5;
    for (const DepthwiseKernel* kern : depthwise_kernels_available())
        for (const PlaneCase& c : kCases)
            for (bool with_bias : {true, false}) check_block(*kern, c, seed += 3, with_bias);
}

// Layout::ChannelBlocks in, out or both, and a last block of fewer channels
// than the vector (its planes the only ones read and written).
TEST(DepthwiseKernels, ChannelBlocksTakeBlockedDataAndShortBlocks)
{
    uint32_t seed = 11;
    for (const DepthwiseKernel* kern : depthwise_kernels_available())
        for (const PlaneCase& c : kCases)
            for (BlockForm form : {BlockForm{true, false}, BlockForm{false, true}, BlockForm{true, true},
                                   BlockForm{false, false, kern->block - 1}, BlockForm{false, true, 1},
                                   BlockForm{true, false, kern->block / 2}})
                check_block(*kern, c, seed += 3, true, form);
}

TEST(DepthwiseKernels, ChannelBlockMaximaMatchAPlainLoop)
{
    uint32_t seed = 7;
    for (const DepthwiseKernel* kern : depthwise_kernels_available())
        for (const PlaneCase& c : kCases) check_block_max(*kern, c, seed += 3);
}

TEST(DepthwiseKernels, PlaneMaximaMatchAPlainLoop)
{
    // Pooling's own shapes: wide rows by pairs of vectors, single vectors, an
    // overlapping last vector and the stride-2 row's last output alone;
    // narrow rows by half-width vectors or none; padding after the input
    // (ceil mode) and on every side.
    const PlaneCase pools[] = {
            {7, 111, 3, 3, 2, 2, 1, 1},             // squeezenet's first pool
            {6, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1}, // resnet's, padded
            {6, 56, 2, 2, 2, 2, 1, 1},              // vgg's 2x2
            {5, 57, 2, 2, 2, 2, 1, 1, 0, 1, 0, 1},  // 2x2 in ceil mode
            {6, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  // googlenet's stride-1 3x3
            {5, 40, 2, 2, 1, 1, 1, 1},              // 2x2 at stride 1
            {4, 27, 3, 3, 2, 2, 1, 1, 0, 1, 0, 1},
            {6, 25, 3, 3, 1, 2, 1, 1},              // stride 2 along the rows only
            {9, 19, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1},  // and along the columns only
            {5, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
            {3, 4, 2, 2, 2, 2, 1, 1},
            {1, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, // a single value in the padding
    };
    uint32_t seed = 11;
    int n = 0;
    for (const DepthwiseKernel* kern : depthwise_kernels_available()) {
        for (const PlaneCase& c : pools) check_plane_max(*kern, c, seed += 3);
        for (const PlaneCase& c : kCases)
            if (max_plane_supported(geometry_of(c))) check_plane_max(*kern, c, seed += 3), ++n;
    }
    EXPECT_GT(n, 0);
}

TEST(DepthwiseKernels, WholePlaneSumsAndMaximaMatchPlainLoops)
{
    for (const DepthwiseKernel* kern : depthwise_kernels_available())
        for (int64_t n : {1, 5, 16, 49, 169, 200}) {
            SCOPED_TRACE(::testing::Message() << kern->isa << " plane of " << n);
            const int64_t block = kern->block, in_plane = n + 3; // gaps between the planes
            const std::vector<float> x = random_values(block * in_plane, static_cast<uint32_t>(n));
            std::vector<float> sums(static_cast<size_t>(block + 1), std::numeric_limits<float>::quiet_NaN());
            std::vector<float> maxima = sums;
            kern->whole_sums(x.data(), in_plane, n, sums.data());
            kern->whole_maxima(x.data(), in_plane, n, maxima.data());
            for (int64_t ch = 0; ch < block; ++ch) {
                float sum = 0.f, max = x[ch * in_plane];
                for (int64_t i = 0; i < n; ++i) {
                    sum += x[ch * in_plane + i]; // in order from 0: the same bits
                    max = std::max(max, x[ch * in_plane + i]);
                }
                EXPECT_EQ(std::memcmp(&sums[ch], &sum, sizeof sum), 0) << "channel " << ch << ": " << sums[ch] << " vs " << sum;
                EXPECT_EQ(maxima[ch], max) << "channel " << ch;
            }
            EXPECT_TRUE(std::isnan(sums[block]) && std::isnan(maxima[block])) << "wrote past the block";
        }
}

} // namespace
} // namespace kestrel
