// The int8 GEMM (kernels/int8_gemm.h), every kernel this CPU runs, against
// int32 sums of the unpacked matrices written here: tails of rows, columns
// and depth, the extreme byte values, the offset-of-128 form the layers use,
// and the same bits at any thread count; and the convolution on it
// (kernels/conv2d_int8_dot.h) against a naive int32 convolution: channel
// counts off the quad, strides, dilations, groups, padding with a value.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/conv2d_int8_dot.h"
#include "kernels/int8_gemm.h"

namespace kestrel {
namespace {

ThreadPool& pool()
{
    static ThreadPool p(3);
    return p;
}

struct Int8Case {
    int64_t m, n, k;
};

std::vector<int8_t> random_weights(int64_t count, std::mt19937& rng)
{
    std::uniform_int_distribution<int> d(-127, 127);
    std::vector<int8_t> v(static_cast<size_t>(count));
    for (auto& x : v) x = static_cast<int8_t>(d(rng));
    return v;
}

std::vector<uint8_t> random_bytes(int64_t count, std::mt19937& rng)
{
    std::uniform_int_distribution<int> d(0, 255);
    std::vector<uint8_t> v(static_cast<size_t>(count));
    for (auto& x : v) x = static_cast<uint8_t>(d(rng));
    return v;
}

// C = init + A B through the kernel's packing, C's rows `ldc` apart (the
// columns past n must stay untouched).
std::vector<int32_t> run_int8_gemm(const Int8GemmKernel& kern, const Int8Case& s, const std::vector<int8_t>& a,
                                   const std::vector<uint8_t>& b, const std::vector<int32_t>& init, int64_t ldc,
                                   const ParallelContext& ctx)
{
    std::vector<int8_t> a_packed(static_cast<size_t>(int8_gemm_packed_a_bytes(kern, s.m, s.k)), 99);
    std::vector<uint8_t> b_packed(static_cast<size_t>(int8_gemm_packed_b_bytes(kern, s.n, s.k)), 99);
    int8_gemm_pack_a(kern, a.data(), s.m, s.k, s.k, a_packed.data());
    int8_gemm_pack_b(kern, b.data(), s.k, s.n, s.n, b_packed.data());
    std::vector<int32_t> c(static_cast<size_t>(s.m * ldc), -7);
    int8_gemm(kern, s.m, s.n, s.k, a_packed.data(), init.data(), b_packed.data(), c.data(), ldc, ctx);
    return c;
}

void expect_reference_sums(const Int8Case& s, const std::vector<int8_t>& a, const std::vector<uint8_t>& b,
                           const std::vector<int32_t>& init, const std::vector<int32_t>& c, int64_t ldc,
                           const char* isa)
{
    for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
            int64_t sum = init[i];
            for (int64_t kk = 0; kk < s.k; ++kk) sum += int64_t(a[i * s.k + kk]) * b[kk * s.n + j];
            ASSERT_EQ(c[i * ldc + j], sum) << isa << " m=" << s.m << " n=" << s.n << " k=" << s.k << " at (" << i
                                           << ", " << j << ")";
        }
        for (int64_t j = s.n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], -7) << isa << ": wrote past column " << s.n;
    }
}

TEST(Int8Gemm, EveryKernelMatchesInt32Sums)
{
    std::mt19937 rng(11);
    const Int8Case cases[] = {{1, 1, 1},   {3, 5, 2},    {4, 8, 4},     {12, 32, 16},  {13, 33, 17},
                              {25, 70, 7}, {7, 100, 64}, {64, 49, 288}, {30, 17, 1153}};
    for (const Int8GemmKernel* kern : int8_gemm_kernels_available())
        for (const Int8Case& s : cases) {
            const auto a = random_weights(s.m * s.k, rng);
            const auto b = random_bytes(s.k * s.n, rng);
            std::vector<int32_t> init(static_cast<size_t>(s.m));
            for (int64_t i = 0; i < s.m; ++i) init[i] = static_cast<int32_t>(i * 1000 - 5000);
            const int64_t ldc = s.n + 3;
            const auto c = run_int8_gemm(*kern, s, a, b, init, ldc, ParallelContext(nullptr, 1));
            expect_reference_sums(s, a, b, init, c, ldc, kern->isa);
        }
}

// The largest products: -128 and 127 weights against 255, and the layers'
// form: signed activations stored + 128, the offset taken off through init.
TEST(Int8Gemm, ExtremeBytesAndTheOffsetFormAreExact)
{
    const Int8Case s{14, 40, 999};
    std::vector<int8_t> a(static_cast<size_t>(s.m * s.k));
    std::vector<uint8_t> b(static_cast<size_t>(s.k * s.n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = i % 3 == 0 ? -128 : 127;
    for (size_t i = 0; i < b.size(); ++i) b[i] = i % 5 == 0 ? 0 : 255;
    const std::vector<int32_t> zeros(static_cast<size_t>(s.m), 0);
    std::mt19937 rng(5);
    const auto w = random_weights(s.m * s.k, rng);
    std::vector<int8_t> x(static_cast<size_t>(s.k * s.n));
    std::vector<uint8_t> x_offset(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
        x_offset[i] = static_cast<uint8_t>(x[i] + 128);
    }
    std::vector<int32_t> compensation;
    for (int64_t sum : int8_gemm_row_sums(w.data(), s.m, s.k, s.k)) compensation.push_back(static_cast<int32_t>(-128 * sum));
    for (const Int8GemmKernel* kern : int8_gemm_kernels_available()) {
        const auto c = run_int8_gemm(*kern, s, a, b, zeros, s.n, ParallelContext(nullptr, 1));
        expect_reference_sums(s, a, b, zeros, c, s.n, kern->isa);
        const auto y = run_int8_gemm(*kern, s, w, x_offset, compensation, s.n, ParallelContext(nullptr, 1));
        for (int64_t i = 0; i < s.m; ++i)
            for (int64_t j = 0; j < s.n; ++j) {
                int32_t sum = 0;
                for (int64_t kk = 0; kk < s.k; ++kk) sum += int32_t(w[i * s.k + kk]) * x[kk * s.n + j];
                ASSERT_EQ(y[i * s.n + j], sum) << kern->isa << " at (" << i << ", " << j << ")";
            }
    }
}

TEST(Int8Gemm, RowDotsMatchInt32Sums)
{
    std::mt19937 rng(13);
    for (const Int8GemmKernel* kern : int8_gemm_kernels_available())
        for (int64_t n : {1, 3, 4, 63, 64, 65, 130, 1000})
            for (int64_t rows : {1, 3, 4, 9}) {
                auto w = random_weights(rows * n, rng);
                auto x = random_bytes(n, rng);
                if (n == 1000) // the largest products
                    for (int64_t i = 0; i < rows * n; ++i) w[i] = -128, x[i % n] = 255;
                std::vector<int32_t> y(static_cast<size_t>(rows) + 1, -7);
                kern->row_dots(w.data(), x.data(), n, rows, y.data());
                for (int64_t o = 0; o < rows; ++o) {
                    int32_t sum = 0;
                    for (int64_t i = 0; i < n; ++i) sum += int32_t(w[o * n + i]) * x[i];
                    ASSERT_EQ(y[o], sum) << kern->isa << " n=" << n << " rows=" << rows << " row " << o;
                }
                ASSERT_EQ(y[rows], -7) << kern->isa << ": wrote past the rows";
            }
}

TEST(Int8Gemm, ThreadCountsGiveTheSameBits)
{
    std::mt19937 rng(3);
    const Int8Case s{50, 300, 130};
    const auto a = random_weights(s.m * s.k, rng);
    const auto b = random_bytes(s.k * s.n, rng);
    const std::vector<int32_t> init(static_cast<size_t>(s.m), 17);
    const Int8GemmKernel& kern = int8_gemm_kernel();
    const auto one = run_int8_gemm(kern, s, a, b, init, s.n, ParallelContext(nullptr, 1));
    const auto many = run_int8_gemm(kern, s, a, b, init, s.n, ParallelContext(&pool(), 3));
    EXPECT_EQ(one, many);
    expect_reference_sums(s, a, b, init, many, s.n, kern.isa);
}

TEST(Int8Gemm, DotProductsAreChosenWhereTheCpuHasThem)
{
    const auto kernels = int8_gemm_kernels_available();
    ASSERT_FALSE(kernels.empty());
    EXPECT_STREQ(kernels.front()->isa, "generic");
    const char* vector_best = cpu_has_avx512_vnni() ? "avx512vnni" : cpu_has_avx_vnni() ? "avxvnni" : "generic";
    const char* best = cpu_has_amx_int8() ? "amx" : vector_best;
    EXPECT_STREQ(int8_gemm_kernel().isa, best);
    EXPECT_EQ(int8_gemm_has_dot_instructions(), cpu_has_avx512_vnni() || cpu_has_avx_vnni());
    // AMX's blocks of 16 quads (64 channels a tap) are taken from 8 quads (29 channels) a tap.
    EXPECT_STREQ(int8_gemm_kernel_for_runs(3).isa, vector_best);
    EXPECT_STREQ(int8_gemm_kernel_for_runs(28).isa, vector_best);
    EXPECT_STREQ(int8_gemm_kernel_for_runs(29).isa, best);
    EXPECT_STREQ(int8_gemm_kernel_for_runs(512).isa, best);
}

struct Int8ConvCase {
    int64_t groups, inch_g, outch_g, h, w, kh, kw, stride_h, stride_w, dilation, pad_top, pad_left, pad_bottom,
        pad_right;
};

// The int32 sums of the convolution, the input padded with `pad`.
std::vector<int32_t> reference_int8_conv(const Int8ConvCase& c, const Conv2dGemmGeometry& g,
                                         const std::vector<int8_t>& x, const std::vector<int8_t>& w, int8_t pad)
{
    std::vector<int32_t> out(static_cast<size_t>(c.groups * c.outch_g * g.out_h * g.out_w));
    const auto at = [&](int64_t ch, int64_t y, int64_t xx) -> int32_t {
        y -= c.pad_top, xx -= c.pad_left;
        return y < 0 || y >= c.h || xx < 0 || xx >= c.w ? pad : x[(ch * c.h + y) * c.w + xx];
    };
    for (int64_t grp = 0; grp < c.groups; ++grp)
        for (int64_t oc = 0; oc < c.outch_g; ++oc)
            for (int64_t oy = 0; oy < g.out_h; ++oy)
                for (int64_t ox = 0; ox < g.out_w; ++ox) {
                    int32_t sum = 0;
                    for (int64_t ic = 0; ic < c.inch_g; ++ic)
                        for (int64_t ky = 0; ky < c.kh; ++ky)
                            for (int64_t kx = 0; kx < c.kw; ++kx)
                                sum += at(grp * c.inch_g + ic, oy * c.stride_h + ky * c.dilation,
                                          ox * c.stride_w + kx * c.dilation) *
                                       w[(((grp * c.outch_g + oc) * c.inch_g + ic) * c.kh + ky) * c.kw + kx];
                    out[((grp * c.outch_g + oc) * g.out_h + oy) * g.out_w + ox] = sum;
                }
    return out;
}

TEST(Int8Conv, EveryKernelMatchesNaiveInt32Sums)
{
    const Int8ConvCase cases[] = {
        {1, 3, 8, 9, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1},    // 3 channels: a partial quad
        {1, 16, 13, 12, 10, 3, 3, 2, 2, 1, 1, 1, 0, 1}, // stride 2, uneven padding
        {1, 8, 5, 7, 9, 1, 1, 1, 1, 1, 0, 0, 0, 0},     // 1x1
        {2, 5, 6, 8, 8, 3, 3, 1, 1, 2, 2, 2, 2, 2},     // groups, dilation 2
        {1, 6, 20, 5, 30, 3, 5, 1, 2, 1, 1, 2, 1, 2},   // a wide kernel, stride 2 along rows only
        {1, 32, 70, 15, 15, 3, 3, 1, 1, 1, 1, 1, 1, 1}, // several column panels and row panels
        {1, 3, 16, 23, 21, 7, 7, 2, 2, 1, 3, 3, 3, 3},  // a 7x7 stride-2 first layer (4 phases, odd sizes)
        {1, 9, 12, 10, 11, 1, 1, 2, 2, 1, 0, 0, 0, 0},  // 1x1 stride 2 (one phase read of four)
        {1, 4, 8, 17, 13, 3, 2, 3, 1, 2, 2, 0, 1, 0},   // stride 3 along rows only, dilation 2
    };
    std::mt19937 rng(23);
    for (const Int8GemmKernel* kern : int8_gemm_kernels_available())
        for (const Int8ConvCase& c : cases) {
            Conv2dGemmGeometry g;
            g.groups = c.groups, g.inch_g = c.inch_g, g.outch_g = c.outch_g, g.kh = c.kh, g.kw = c.kw;
            g.stride_h = c.stride_h, g.stride_w = c.stride_w, g.dilation_h = g.dilation_w = c.dilation;
            g.in_h = c.h + c.pad_top + c.pad_bottom, g.in_w = c.w + c.pad_left + c.pad_right;
            g.out_h = (g.in_h - (c.kh - 1) * c.dilation - 1) / c.stride_h + 1;
            g.out_w = (g.in_w - (c.kw - 1) * c.dilation - 1) / c.stride_w + 1;
            const auto x = random_weights(c.groups * c.inch_g * c.h * c.w, rng);
            const auto w = random_weights(c.groups * c.outch_g * c.inch_g * c.kh * c.kw, rng);
            const int8_t pad = -3;
            const auto expected = reference_int8_conv(c, g, x, w, pad);
            for (int threads : {1, 3}) {
                const ParallelContext ctx(threads > 1 ? &pool() : nullptr, threads);
                const Conv2dInt8Dot packed = conv2d_int8_dot_prepare(*kern, w.data(), g);
                std::vector<uint8_t> input(static_cast<size_t>(conv2d_int8_dot_input_bytes(*kern, g)), 0x5a);
                conv2d_int8_dot_input(*kern, g, x.data(), c.h, c.w, c.pad_top, c.pad_left, pad, input.data(), ctx);
                std::vector<int32_t> got(expected.size(), -7);
                std::vector<int> seen(expected.size(), 0);
                const int64_t plane = g.out_h * g.out_w;
                conv2d_int8_dot(*kern, packed, g, conv2d_int8_dot_offsets(g, packed), input.data(),
                                [&](int64_t channel, int64_t pixel, const int32_t* sums, int64_t count) {
                                    for (int64_t i = 0; i < count; ++i) {
                                        got[channel * plane + pixel + i] = sums[i];
                                        ++seen[channel * plane + pixel + i];
                                    }
                                },
                                ctx);
                for (size_t i = 0; i < expected.size(); ++i) {
                    ASSERT_EQ(got[i], expected[i]) << kern->isa << " case " << (&c - cases) << " threads " << threads
                                                   << " output " << i;
                    ASSERT_EQ(seen[i], 1) << kern->isa << " case " << (&c - cases) << ": output " << i
                                          << " finished " << seen[i] << " times";
                }
            }
        }
}

} // namespace
} // namespace kestrel
