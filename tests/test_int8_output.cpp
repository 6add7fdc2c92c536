// The int8 output kernels (kernels/int8_output.h), every one this CPU runs,
// against the rounding written here with std::round (half away from zero) and
// the float arithmetic of ncnn's dequantization: every tail length, the .5
// boundaries, the +-127 clamps, NaN, bias and clamp on and off.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/int8_output.h"

namespace kestrel {
namespace {

int8_t reference_int8(float v)
{
    if (std::isnan(v)) return 0;
    return static_cast<int8_t>(std::round(std::min(std::max(v, -127.f), 127.f)));
}

float reference_dequantized(int32_t s, float scale, const float* bias, const float* residual, const float* clamp)
{
    volatile float product = static_cast<float>(s) * scale; // rounded before the add
    float v = product;
    if (bias) v += *bias;
    if (residual) v += *residual;
    if (clamp) v = std::min(std::max(v, clamp[0]), clamp[1]);
    return v;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(Int8Output, QuantizeRoundsHalfAwayFromZeroAndClamps)
{
    std::vector<float> x = {0.5f, -0.5f, 1.5f, -1.5f, 2.5f, 0.49999997f, -0.49999997f, 126.5f, 127.4f, 128.f,
                            -128.f, 1e30f, -1e30f, std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 0.f,
                            -0.f, 3.25f, -3.75f};
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-200.f, 200.f);
    for (int i = 0; i < 300; ++i) x.push_back(d(rng));
    for (float scale : {1.f, 0.37f, 12.5f})
        for (const Int8OutputKernel* kern : int8_output_kernels_available())
            for (size_t n = 1; n <= x.size(); n += n < 40 ? 1 : 97) {
                std::vector<int8_t> q(n + 1, 99);
                kern->quantize(x.data(), static_cast<int64_t>(n), scale, q.data());
                for (size_t i = 0; i < n; ++i)
                    ASSERT_EQ(q[i], reference_int8(x[i] * scale))
                        << kern->isa << " x=" << x[i] << " scale=" << scale << " n=" << n;
                ASSERT_EQ(q[n], 99) << kern->isa << ": wrote past n=" << n;
            }
}

// Around every half (k + 0.5 for k in [-128, 127]) and every integer, 4 floats
// either side: where a rounding by an added near-half could go wrong.
TEST(Int8Output, QuantizeSweepOfHalvesAndTheirNeighbours)
{
    std::vector<float> x;
    for (int k = -128; k <= 128; ++k)
        for (float centre : {k + 0.5f, float(k)}) {
            float below = centre, above = centre;
            x.push_back(centre);
            for (int step = 0; step < 4; ++step) {
                below = std::nextafter(below, -1e9f), above = std::nextafter(above, 1e9f);
                x.push_back(below), x.push_back(above);
            }
        }
    for (const Int8OutputKernel* kern : int8_output_kernels_available()) {
        std::vector<int8_t> q(x.size());
        kern->quantize(x.data(), static_cast<int64_t>(x.size()), 1.f, q.data());
        for (size_t i = 0; i < x.size(); ++i)
            ASSERT_EQ(q[i], reference_int8(x[i])) << kern->isa << " x=" << x[i];
    }
}

// The dot kernels' input words: four channels' bytes (the first lowest), each
// plus 128, from int8 values and from floats quantized as `quantize` does;
// every tail length, nothing written past n.
TEST(Int8Output, OffsetQuadsInterleaveFourChannels)
{
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> d(-140.f, 140.f);
    constexpr size_t kMax = 70;
    std::vector<float> f[4];
    std::vector<int8_t> b[4];
    for (int k = 0; k < 4; ++k)
        for (size_t i = 0; i < kMax; ++i) f[k].push_back(d(rng)), b[k].push_back(reference_int8(f[k].back()));
    f[2][5] = 0.5f, f[3][6] = -0.5f, f[1][7] = std::numeric_limits<float>::quiet_NaN();
    const float scale = 0.75f;
    const float* fs[4] = {f[0].data(), f[1].data(), f[2].data(), f[3].data()};
    const int8_t* bs[4] = {b[0].data(), b[1].data(), b[2].data(), b[3].data()};
    const auto word = [](int8_t c0, int8_t c1, int8_t c2, int8_t c3) {
        return uint32_t(uint8_t(c0 + 128)) | uint32_t(uint8_t(c1 + 128)) << 8 | uint32_t(uint8_t(c2 + 128)) << 16 |
               uint32_t(uint8_t(c3 + 128)) << 24;
    };
    for (const Int8OutputKernel* kern : int8_output_kernels_available())
        for (size_t n = 1; n <= kMax; ++n) {
            std::vector<uint32_t> from_bytes(n + 1, 7u), from_floats(n + 1, 7u);
            kern->offset_quads(bs, static_cast<int64_t>(n), 0x80808080u, from_bytes.data());
            kern->quantize_offset_quads(fs, static_cast<int64_t>(n), scale, from_floats.data());
            for (size_t i = 0; i < n; ++i) {
                ASSERT_EQ(from_bytes[i], word(b[0][i], b[1][i], b[2][i], b[3][i])) << kern->isa << " n=" << n << " i=" << i;
                ASSERT_EQ(from_floats[i], word(reference_int8(f[0][i] * scale), reference_int8(f[1][i] * scale),
                                               reference_int8(f[2][i] * scale), reference_int8(f[3][i] * scale)))
                    << kern->isa << " n=" << n << " i=" << i;
            }
            ASSERT_EQ(from_bytes[n], 7u) << kern->isa << ": wrote past n=" << n;
            std::vector<uint32_t> unflipped(n);
            kern->offset_quads(bs, static_cast<int64_t>(n), 0u, unflipped.data()); // uint8 values as they are
            for (size_t i = 0; i < n; ++i) ASSERT_EQ(unflipped[i], from_bytes[i] ^ 0x80808080u) << kern->isa << " i=" << i;
            ASSERT_EQ(from_floats[n], 7u) << kern->isa << ": wrote past n=" << n;
        }
}

// ONNX's requantization: round half to even (std::nearbyint in the default
// rounding mode) of float(sum + offset) * scale, plus the zero point,
// saturated to the output type's range; ties at every multiple of a half,
// int32 and float sums, every tail length.
TEST(Int8Output, RequantizeEvenRoundsTiesToEvenAndSaturates)
{
    std::vector<int32_t> sums;
    for (int32_t k = -700; k <= 700; ++k) sums.push_back(k); // scale 0.5 puts ties on every odd sum
    std::mt19937 rng(13);
    std::uniform_int_distribution<int32_t> d(-3000000, 3000000);
    for (int i = 0; i < 200; ++i) sums.push_back(d(rng));
    sums.push_back(2147483647), sums.push_back(-2147483647 - 1);
    struct Range {
        int32_t lo, hi, zero_point;
    };
    for (const Int8OutputKernel* kern : int8_output_kernels_available())
        for (float scale : {0.5f, 0.25f, 1.f / 3.f, 0.0123f})
            for (const Range& r : {Range{0, 255, 0}, Range{0, 255, 128}, Range{0, 255, 3}, Range{-128, 127, 0},
                                   Range{-128, 127, -5}})
                for (size_t n : {size_t(1), size_t(15), size_t(17), sums.size()}) {
                    std::vector<uint8_t> q(n + 1, 0xAB);
                    const int32_t offset = -37;
                    kern->requantize_even(sums.data(), static_cast<int64_t>(n), offset, scale, r.zero_point, r.lo, r.hi,
                                          q.data());
                    // The same sums held as floats (those exact: within 2^24).
                    std::vector<float> float_sums;
                    for (size_t i = 0; i < n; ++i) float_sums.push_back(static_cast<float>(sums[i] & 0xFFFFFF));
                    std::vector<uint8_t> qf(n);
                    kern->requantize_even_floats(float_sums.data(), static_cast<int64_t>(n), offset, scale, r.zero_point,
                                                 r.lo, r.hi, qf.data());
                    for (size_t i = 0; i < n; ++i) {
                        const int32_t with_offset = static_cast<int32_t>(static_cast<uint32_t>(sums[i]) + static_cast<uint32_t>(offset));
                        const double v = std::nearbyint(static_cast<double>(static_cast<float>(with_offset) * scale));
                        const double vf = std::nearbyint(static_cast<double>(static_cast<float>((sums[i] & 0xFFFFFF) + offset) * scale));
                        const int32_t want_f = static_cast<int32_t>(std::min<double>(std::max<double>(vf + r.zero_point, r.lo), r.hi));
                        ASSERT_EQ(qf[i], static_cast<uint8_t>(want_f)) << kern->isa << " float sum " << float_sums[i];
                        const int32_t want = static_cast<int32_t>(std::min<double>(std::max<double>(v + r.zero_point, r.lo), r.hi));
                        ASSERT_EQ(q[i], static_cast<uint8_t>(want)) << kern->isa << " sum " << sums[i] << " scale " << scale
                                                                    << " zero point " << r.zero_point;
                    }
                    ASSERT_EQ(q[n], 0xAB) << kern->isa << ": wrote past n=" << n;
                }
}

// The same with an offset and a scale per value (a row of a quantized
// matrix product's columns): each value takes its own, every tail length.
TEST(Int8Output, RequantizeEvenColumnsTakesEachValuesOffsetAndScale)
{
    std::vector<int32_t> sums;
    for (int32_t k = -300; k <= 300; ++k) sums.push_back(k * 7);
    sums.push_back(2147483647), sums.push_back(-2147483647 - 1);
    const float choices[] = {0.5f, 0.25f, 1.f / 3.f, 0.0123f, 2.f};
    std::vector<int32_t> offsets;
    std::vector<float> scales;
    for (size_t i = 0; i < sums.size(); ++i) {
        offsets.push_back(static_cast<int32_t>(i % 5) * 1000 - 2001);
        scales.push_back(choices[(i * 3) % 5]);
    }
    for (const Int8OutputKernel* kern : int8_output_kernels_available())
        for (const int32_t zero_point : {0, 3, -5})
            for (size_t n : {size_t(1), size_t(15), size_t(17), sums.size()}) {
                const int32_t lo = zero_point < 0 ? -128 : 0, hi = zero_point < 0 ? 127 : 255;
                std::vector<uint8_t> q(n + 1, 0xAB);
                kern->requantize_even_columns(sums.data(), static_cast<int64_t>(n), offsets.data(), scales.data(),
                                              zero_point, lo, hi, q.data());
                for (size_t i = 0; i < n; ++i) {
                    const int32_t with_offset =
                        static_cast<int32_t>(static_cast<uint32_t>(sums[i]) + static_cast<uint32_t>(offsets[i]));
                    const double v = std::nearbyint(static_cast<double>(static_cast<float>(with_offset) * scales[i]));
                    const int32_t want = static_cast<int32_t>(std::min<double>(std::max<double>(v + zero_point, lo), hi));
                    ASSERT_EQ(q[i], static_cast<uint8_t>(want)) << kern->isa << " value " << i << " sum " << sums[i];
                }
                ASSERT_EQ(q[n], 0xAB) << kern->isa << ": wrote past n=" << n;
            }
}

// ONNX's QuantizeLinear of floats: x / scale (divided) rounded half to even,
// plus the zero point, saturated; NaN to 0, a zero scale saturates; and
// DequantizeLinear of every byte, uint8 and int8.
TEST(Int8Output, QuantizeEvenAndDequantizeBytesFollowOnnx)
{
    std::vector<float> x;
    for (int k = -600; k <= 600; ++k) x.push_back(static_cast<float>(k) * 0.25f); // ties at every half
    std::mt19937 rng(21);
    std::uniform_real_distribution<float> d(-1e4f, 1e4f);
    for (int i = 0; i < 300; ++i) x.push_back(d(rng));
    for (float v : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(), 3e38f, -3e38f, 0.f, -0.f})
        x.push_back(v);
    std::vector<uint8_t> bytes(256);
    for (int b = 0; b < 256; ++b) bytes[static_cast<size_t>(b)] = static_cast<uint8_t>(b);
    for (const Int8OutputKernel* kern : int8_output_kernels_available()) {
        for (const float scale : {0.5f, 1.f, 0.37f, 3.f, 0.f})
            for (const int32_t zero_point : {0, 128, 7, -3})
                for (size_t n : {size_t(1), size_t(15), size_t(17), x.size()}) {
                    const int32_t lo = zero_point < 0 || zero_point == 7 ? -128 : 0, hi = lo == 0 ? 255 : 127;
                    std::vector<uint8_t> q(n + 1, 0xAB);
                    kern->quantize_even(x.data(), static_cast<int64_t>(n), scale, zero_point, lo, hi, q.data());
                    for (size_t i = 0; i < n; ++i) {
                        const double r = static_cast<double>(std::nearbyint(x[i] / scale)) + zero_point;
                        const int32_t want = r != r ? 0 : static_cast<int32_t>(std::min<double>(std::max<double>(r, lo), hi));
                        ASSERT_EQ(q[i], static_cast<uint8_t>(want))
                            << kern->isa << " x " << x[i] << " scale " << scale << " zero point " << zero_point;
                    }
                    ASSERT_EQ(q[n], 0xAB) << kern->isa << ": wrote past n=" << n;
                }
        for (const bool is_signed : {false, true})
            for (size_t n : {size_t(3), size_t(16), size_t(256)}) {
                std::vector<float> y(n + 1, -7.f);
                kern->dequantize_bytes(bytes.data(), static_cast<int64_t>(n), is_signed, 5, 0.013f, y.data());
                for (size_t i = 0; i < n; ++i) {
                    const int v = is_signed ? static_cast<int8_t>(bytes[i]) : bytes[i];
                    ASSERT_EQ(y[i], static_cast<float>(v - 5) * 0.013f) << kern->isa << " byte " << i;
                }
                ASSERT_EQ(y[n], -7.f) << kern->isa << ": wrote past n=" << n;
            }
    }
}

TEST(Int8Output, DequantizeAndRequantizeMatchTheFloatSteps)
{
    std::mt19937 rng(9);
    std::vector<int32_t> sums = {0, 1, -1, 1 << 24, -(1 << 24), (1 << 24) + 1, 2147483647, -2147483647 - 1};
    std::uniform_int_distribution<int32_t> d(-400000, 400000);
    for (int i = 0; i < 200; ++i) sums.push_back(d(rng));
    std::uniform_real_distribution<float> r(-90.f, 90.f);
    std::vector<float> residuals;
    for (size_t i = 0; i < sums.size(); ++i) residuals.push_back(r(rng));
    const float* const residual_choices[2] = {nullptr, residuals.data()};
    const float inf = std::numeric_limits<float>::infinity();
    // Clamps: ReLU, Clip, and an upper bound alone (each side a step the kernels may leave out).
    const float bias_value = -3.25f, relu[2] = {0.f, inf}, clip[2] = {-6.f, 6.f}, upper[2] = {-inf, 6.f};
    for (const Int8OutputKernel* kern : int8_output_kernels_available())
        for (const float* bias : {static_cast<const float*>(nullptr), &bias_value})
            for (const float* clamp : {static_cast<const float*>(nullptr), relu, clip, upper})
                // Lengths across the 4-vector blocks and their tails; output scales saturating
                // most values, none, and negative (a clamp >= 0 no longer keeps products >= 0).
                for (int64_t n : {int64_t(1), int64_t(7), int64_t(16), int64_t(33), int64_t(71), int64_t(sums.size())})
                    for (const float out_scale : {9.5f, 0.75f, -0.75f})
                    for (const float* residual : residual_choices) {
                        const float scale = 1.f / 4096.f;
                        // From int32 sums, and from the same sums held as floats.
                        std::vector<float> float_sums(sums.begin(), sums.end());
                        for (bool floats : {false, true}) {
                            std::vector<float> y(static_cast<size_t>(n) + 1, 42.f);
                            std::vector<int8_t> q(static_cast<size_t>(n) + 1, 99);
                            if (floats) {
                                kern->dequantize_floats(float_sums.data(), n, scale, bias, residual, clamp, y.data());
                                kern->requantize_floats(float_sums.data(), n, scale, bias, clamp, out_scale, q.data());
                            } else {
                                kern->dequantize(sums.data(), n, scale, bias, residual, clamp, y.data());
                                kern->requantize(sums.data(), n, scale, bias, clamp, out_scale, q.data());
                            }
                            for (int64_t i = 0; i < n; ++i) {
                                const float ref = reference_dequantized(sums[i], scale, bias,
                                                                        residual ? residual + i : nullptr, clamp);
                                ASSERT_TRUE(same_bits(y[i], ref)) << kern->isa << " floats " << floats << " sum="
                                                                  << sums[i] << ": " << y[i] << " vs " << ref;
                                const float unresidual = reference_dequantized(sums[i], scale, bias, nullptr, clamp);
                                ASSERT_EQ(q[i], reference_int8(unresidual * out_scale)) << kern->isa << " sum=" << sums[i];
                            }
                            ASSERT_EQ(y[n], 42.f) << kern->isa;
                            ASSERT_EQ(q[n], 99) << kern->isa;
                        }
                    }
}

// Requantization where NaN can arise (a NaN or infinite bias, an infinite
// product times a zero output scale) takes NaN to 0 as float2int8 does; the
// kernel skips that step only where every value is finite.
TEST(Int8Output, RequantizeOfNonFiniteValuesMatchesTheFloatSteps)
{
    const std::vector<int32_t> sums = {0, 1, -1, 5000, -70000, 2147483647, -2147483647 - 1, 12, -3, 99, 100000,
                                       -100000, 7, 8, 9, 10, 11};
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    struct Case {
        float scale, bias, out_scale;
    };
    for (const Int8OutputKernel* kern : int8_output_kernels_available())
        for (const Case& c : {Case{0.01f, nan, 1.f}, Case{0.01f, inf, 1.f}, Case{0.01f, -inf, 2.f},
                              Case{1e30f, 0.f, 0.f}, Case{3e38f, 1.f, 1.f}, Case{0.01f, 1.f, inf}}) {
            std::vector<int8_t> q(sums.size(), 99);
            kern->requantize(sums.data(), static_cast<int64_t>(sums.size()), c.scale, &c.bias, nullptr, c.out_scale,
                             q.data());
            for (size_t i = 0; i < sums.size(); ++i)
                ASSERT_EQ(q[i], reference_int8(reference_dequantized(sums[i], c.scale, &c.bias, nullptr, nullptr) *
                                               c.out_scale))
                    << kern->isa << " scale " << c.scale << " bias " << c.bias << " out " << c.out_scale << " sum "
                    << sums[i];
        }
}

} // namespace
} // namespace kestrel
