// The bfloat16 GEMM (kernels/bf16_gemm.h), every kernel this CPU runs, against
// sums in double of the same matrices rounded to bfloat16 here (the kernels'
// only other difference is the order of fp32 additions): tails of rows,
// columns and depth (odd k), init, C's stride; and the convolution on it
// (kernels/conv2d_bf16.h) against a naive convolution of the rounded values:
// strides, dilations, groups, padding with a value, channel counts off the
// word and off AMX's blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/half.h"
#include "kernels/bf16_gemm.h"
#include "kernels/conv2d_bf16.h"

namespace kestrel {
namespace {

float rounded(float v) { return bf16_to_float(float_to_bf16(v)); }

std::vector<float> random_floats(int64_t count, std::mt19937& rng)
{
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> v(static_cast<size_t>(count));
    for (auto& x : v) x = d(rng);
    return v;
}

// |got - want| within fp32 rounding of sums of `terms` products of magnitude `scale`.
void expect_close(float got, double want, double magnitude, const std::string& where)
{
    ASSERT_NEAR(got, want, 1e-5 * magnitude + 1e-6) << where;
}

TEST(Bf16Gemm, EveryKernelMatchesSumsOfRoundedValues)
{
    std::mt19937 rng(21);
    struct Case {
        int64_t m, n, k;
    };
    const Case cases[] = {{1, 1, 1}, {3, 5, 2}, {4, 8, 3}, {33, 31, 64}, {32, 32, 32}, {13, 70, 65}, {64, 100, 513}};
    for (const Bf16GemmKernel* kern : bf16_gemm_kernels_available())
        for (const Case& s : cases) {
            const auto a = random_floats(s.m * s.k, rng), b = random_floats(s.k * s.n, rng);
            std::vector<float> init(static_cast<size_t>(s.m));
            for (int64_t i = 0; i < s.m; ++i) init[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
            std::vector<uint16_t> a_packed(static_cast<size_t>(bf16_gemm_packed_a_values(*kern, s.m, s.k)), 0xffff);
            std::vector<uint16_t> b_packed(static_cast<size_t>(bf16_gemm_packed_b_values(*kern, s.n, s.k)), 0xffff);
            bf16_gemm_pack_a(*kern, a.data(), s.m, s.k, s.k, a_packed.data());
            bf16_gemm_pack_b(*kern, b.data(), s.k, s.n, s.n, b_packed.data());
            const int64_t ldc = s.n + 3;
            std::vector<float> c(static_cast<size_t>(s.m * ldc), -7.f);
            bf16_gemm(*kern, s.m, s.n, s.k, a_packed.data(), init.data(), b_packed.data(), c.data(), ldc,
                      ParallelContext(nullptr, 1));
            for (int64_t i = 0; i < s.m; ++i) {
                for (int64_t j = 0; j < s.n; ++j) {
                    double sum = init[i], magnitude = std::fabs(init[i]);
                    for (int64_t kk = 0; kk < s.k; ++kk) {
                        const double p = double(rounded(a[i * s.k + kk])) * rounded(b[kk * s.n + j]);
                        sum += p, magnitude += std::fabs(p);
                    }
                    expect_close(c[i * ldc + j], sum, magnitude,
                                 std::string(kern->isa) + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
                                     " k=" + std::to_string(s.k) + " at " + std::to_string(i) + "," +
                                     std::to_string(j));
                }
                for (int64_t j = s.n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], -7.f) << kern->isa << ": wrote past n";
            }
        }
}

TEST(Bf16Gemm, TheCpusBfloat16InstructionsAreChosen)
{
    const auto kernels = bf16_gemm_kernels_available();
    EXPECT_STREQ(kernels.front()->isa, "generic");
    const char* best = cpu_has_amx_bf16() ? "amx" : cpu_has_avx512_bf16() ? "avx512bf16" : "generic";
    EXPECT_STREQ(bf16_gemm_kernel().isa, best);
    EXPECT_EQ(bf16_gemm_has_dot_instructions(), cpu_has_amx_bf16() || cpu_has_avx512_bf16());
}

// The rounding: to nearest, ties to even, NaN kept a NaN.
TEST(Bf16Gemm, WordsRoundToNearestEven)
{
    const float tie_down = 1.f + 1.f / 256, tie_up = 1.f + 3.f / 256; // halfway between bf16 neighbours
    EXPECT_EQ(bf16_word(tie_down, tie_up), uint32_t(0x3f80) | uint32_t(0x3f82) << 16);
    EXPECT_EQ(bf16_word(1.f + 1.f / 256 + 1.f / 4096, -2.f) & 0xffffu, 0x3f81u);
    EXPECT_TRUE(std::isnan(bf16_to_float(static_cast<uint16_t>(bf16_word(NAN, 0.f)))));
}

struct ConvCase {
    int64_t groups, inch_g, outch_g, h, w, kh, kw, stride, dilation, pad;
};

// A naive convolution of the rounded values, padded with `pad_value`.
std::vector<double> reference_conv(const ConvCase& s, const std::vector<float>& x, const std::vector<float>& weights,
                                   const std::vector<float>& bias, float pad_value, int64_t out_h, int64_t out_w,
                                   std::vector<double>& magnitude)
{
    std::vector<double> y(static_cast<size_t>(s.groups * s.outch_g * out_h * out_w));
    magnitude.assign(y.size(), 0.0);
    for (int64_t grp = 0; grp < s.groups; ++grp)
        for (int64_t oc = 0; oc < s.outch_g; ++oc)
            for (int64_t oy = 0; oy < out_h; ++oy)
                for (int64_t ox = 0; ox < out_w; ++ox) {
                    const int64_t o = grp * s.outch_g + oc;
                    double sum = bias[o], mag = std::fabs(bias[o]);
                    for (int64_t ic = 0; ic < s.inch_g; ++ic)
                        for (int64_t ky = 0; ky < s.kh; ++ky)
                            for (int64_t kx = 0; kx < s.kw; ++kx) {
                                const int64_t iy = oy * s.stride + ky * s.dilation - s.pad;
                                const int64_t ix = ox * s.stride + kx * s.dilation - s.pad;
                                const bool inside = iy >= 0 && iy < s.h && ix >= 0 && ix < s.w;
                                const float v = inside ? x[((grp * s.inch_g + ic) * s.h + iy) * s.w + ix] : pad_value;
                                const double p =
                                    double(rounded(v)) * rounded(weights[((o * s.inch_g) + ic) * s.kh * s.kw + ky * s.kw + kx]);
                                sum += p, mag += std::fabs(p);
                            }
                    const size_t i = static_cast<size_t>((o * out_h + oy) * out_w + ox);
                    y[i] = sum, magnitude[i] = mag;
                }
    return y;
}

TEST(Bf16Conv, EveryKernelMatchesANaiveConvolutionOfRoundedValues)
{
    std::mt19937 rng(23);
    const ConvCase cases[] = {
        {1, 16, 32, 9, 11, 3, 3, 1, 1, 1},  {1, 33, 40, 8, 8, 1, 1, 1, 1, 0}, {1, 20, 17, 13, 12, 3, 3, 2, 1, 1},
        {2, 18, 9, 7, 10, 3, 3, 1, 2, 2},   {1, 64, 64, 14, 14, 1, 1, 2, 1, 0}, {1, 17, 70, 15, 15, 5, 5, 3, 1, 2},
    };
    const float pad_value = 0.75f;
    for (const Bf16GemmKernel* kern : bf16_gemm_kernels_available())
        for (const ConvCase& s : cases) {
            Conv2dGemmGeometry g;
            g.groups = s.groups, g.inch_g = s.inch_g, g.outch_g = s.outch_g;
            g.in_h = s.h + 2 * s.pad, g.in_w = s.w + 2 * s.pad;
            g.kh = s.kh, g.kw = s.kw, g.stride_h = g.stride_w = s.stride, g.dilation_h = g.dilation_w = s.dilation;
            g.out_h = (g.in_h - (s.kh - 1) * s.dilation - 1) / s.stride + 1;
            g.out_w = (g.in_w - (s.kw - 1) * s.dilation - 1) / s.stride + 1;
            const int64_t outch = s.groups * s.outch_g, plane = g.out_h * g.out_w;
            const auto x = random_floats(s.groups * s.inch_g * s.h * s.w, rng);
            const auto weights = random_floats(outch * s.inch_g * s.kh * s.kw, rng);
            const auto bias = random_floats(outch, rng);
            const Conv2dBf16 packed = conv2d_bf16_prepare(*kern, weights.data(), bias.data(), g);
            std::vector<uint32_t> input(static_cast<size_t>(conv2d_bf16_input_words(*kern, g)), 0xffffffffu);
            conv2d_bf16_input(*kern, packed, g, x.data(), s.h, s.w, s.pad, s.pad, pad_value, input.data(),
                              ParallelContext(nullptr, 1));
            std::vector<float> y(static_cast<size_t>(outch * plane), NAN);
            conv2d_bf16(*kern, packed, g, conv2d_bf16_offsets(g, packed), input.data(),
                        [&](int64_t oc, int64_t pixel, const float* sums, int64_t n) {
                            for (int64_t i = 0; i < n; ++i) {
                                ASSERT_TRUE(std::isnan(y[oc * plane + pixel + i])) << "a pixel finished twice";
                                y[oc * plane + pixel + i] = sums[i];
                            }
                        },
                        ParallelContext(nullptr, 1));
            std::vector<double> magnitude;
            const auto want = reference_conv(s, x, weights, bias, pad_value, g.out_h, g.out_w, magnitude);
            for (size_t i = 0; i < y.size(); ++i)
                expect_close(y[i], want[i], magnitude[i],
                             std::string(kern->isa) + " case inch_g=" + std::to_string(s.inch_g) + " k=" +
                                 std::to_string(s.kh) + " stride=" + std::to_string(s.stride) + " at " +
                                 std::to_string(i));
        }
}

} // namespace
} // namespace kestrel
