// The 2-D pooling kernel (kernels/pool2d.h) against the pooling op's N-d
// reference kernels (common/sliding_window.h) with ncnn's conventions, bit for
// bit: random plane sizes, kernels, strides, pads and counted ranges, float32
// and int8, max and average, including windows wholly in the padding.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/max_pool_int8.h"
#include "kernels/pool2d.h"
#include "ops/common/sliding_window.h"

namespace kestrel {
namespace {

Tensor random_planes(const Shape& s, DType dt, std::mt19937& rng)
{
    Tensor t(s, dt);
    std::uniform_real_distribution<float> f(-3.f, 3.f);
    std::uniform_int_distribution<int> i(-128, 127);
    for (int64_t k = 0; k < t.numel(); ++k) {
        if (dt == DType::I8) t.data<int8_t>()[k] = static_cast<int8_t>(i(rng));
        else t.data<float>()[k] = f(rng);
    }
    return t;
}

bool same_bytes(const Tensor& a, const Tensor& b)
{
    return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

TEST(Pool2dKernel, MatchesTheReferenceWithNcnnConventions)
{
    std::mt19937 rng(5);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const ExecContext ctx(nullptr, 1);
    for (int trial = 0; trial < 400; ++trial) {
        Pool2dGeometry g;
        // Some rows wide enough for the vectors along them (max pooling by
        // rows), some windows as large as SPP's (up to 13x13, by rows of maxima).
        const bool large = trial % 5 == 0;
        g.in_h = pick(1, large ? 20 : 9), g.in_w = pick(0, 3) == 0 ? pick(30, 70) : pick(1, large ? 20 : 9);
        g.kernel_h = large ? pick(5, 13) : pick(1, 4), g.kernel_w = large ? pick(5, 13) : pick(1, 4);
        g.stride_h = pick(1, 3), g.stride_w = pick(1, 3);
        const int max_pad = large ? 6 : 3;
        g.pad_top = pick(0, max_pad), g.pad_left = pick(0, max_pad);
        const int64_t pad_bottom = pick(0, max_pad), pad_right = pick(0, max_pad);
        const int64_t ph = g.in_h + g.pad_top + pad_bottom, pw = g.in_w + g.pad_left + pad_right;
        if (ph < g.kernel_h || pw < g.kernel_w) continue;
        g.out_h = (ph - g.kernel_h) / g.stride_h + 1, g.out_w = (pw - g.kernel_w) / g.stride_w + 1;
        g.count_include_pad = pick(0, 1) == 1;
        // A counted range around the input (ncnn's SAME modes count some padding).
        g.count_y0 = -pick(0, static_cast<int>(g.pad_top)), g.count_y1 = g.in_h + pick(0, static_cast<int>(pad_bottom));
        g.count_x0 = -pick(0, static_cast<int>(g.pad_left)), g.count_x1 = g.in_w + pick(0, static_cast<int>(pad_right));
        const bool max = pick(0, 1) == 1;
        const DType dt = max && pick(0, 1) == 1 ? DType::I8 : DType::F32;
        // 37 planes: blocks of channels (depthwise_conv2d.h) and the planes after them.
        const int64_t planes = pick(0, 1) == 1 ? 37 : 3;
        const Tensor x = random_planes({planes, g.in_h, g.in_w}, dt, rng);
        std::vector<window::Axis> axes(2);
        axes[0].kernel = g.kernel_h, axes[0].stride = g.stride_h, axes[0].pad_begin = g.pad_top, axes[0].out = g.out_h;
        axes[1].kernel = g.kernel_w, axes[1].stride = g.stride_w, axes[1].pad_begin = g.pad_left, axes[1].out = g.out_w;
        std::vector<window::Span> counted = {{g.count_y0, g.count_y1}, {g.count_x0, g.count_x1}};
        if (g.count_include_pad) counted = {{-g.pad_top, ph}, {-g.pad_left, pw}};
        Tensor got({planes, g.out_h, g.out_w}, dt), want({planes, g.out_h, g.out_w}, dt);
        if (max) {
            max_pool2d(x, g, got, ctx);
            window::max_pool(x, axes, window::PoolConvention::Ncnn, want, nullptr, 0, false, ctx);
        } else {
            average_pool2d(x, g, got, ctx);
            window::average_pool(x, axes, counted, window::PoolConvention::Ncnn, want, ctx);
        }
        ASSERT_TRUE(same_bytes(got, want)) << "trial " << trial << (max ? " max " : " average ") << dtype_name(dt)
                                           << " planes " << planes
                                           << " in " << g.in_h << "x" << g.in_w << " kernel " << g.kernel_h << "x"
                                           << g.kernel_w << " stride " << g.stride_h << "x" << g.stride_w << " pads "
                                           << g.pad_top << "," << g.pad_left << "," << pad_bottom << "," << pad_right;
    }
}

// Int8 max pooling 3x3 at stride 2 (ncnn's usual pool), whose rows take a
// vector path once 8 windows fit: every width from 1 to 70, pads 0 and 1.
TEST(Pool2dKernel, Int8ThreeByThreeStrideTwoMatchesTheReference)
{
    std::mt19937 rng(21);
    const ExecContext ctx(nullptr, 1);
    for (int64_t w = 1; w <= 70; ++w)
        for (int64_t pad : {0, 1}) {
            Pool2dGeometry g;
            g.in_h = 5, g.in_w = w, g.kernel_h = g.kernel_w = 3, g.stride_h = g.stride_w = 2;
            g.pad_top = g.pad_left = pad;
            const int64_t ph = g.in_h + 2 * pad, pw = w + 2 * pad;
            if (pw < 3) continue;
            g.out_h = (ph - 3) / 2 + 1, g.out_w = (pw - 3) / 2 + 1;
            g.count_y1 = g.in_h, g.count_x1 = w;
            const Tensor x = random_planes({2, g.in_h, w}, DType::I8, rng);
            std::vector<window::Axis> axes(2);
            axes[0].kernel = 3, axes[0].stride = 2, axes[0].pad_begin = pad, axes[0].out = g.out_h;
            axes[1].kernel = 3, axes[1].stride = 2, axes[1].pad_begin = pad, axes[1].out = g.out_w;
            Tensor got({2, g.out_h, g.out_w}, DType::I8), want({2, g.out_h, g.out_w}, DType::I8);
            max_pool2d(x, g, got, ctx);
            window::max_pool(x, axes, window::PoolConvention::Ncnn, want, nullptr, 0, false, ctx);
            ASSERT_TRUE(same_bytes(got, want)) << "width " << w << " pad " << pad;
        }
}

// Every int8 max-pooling kernel this CPU has for the window (AVX-512's masked
// 64-byte loads, the plain loops) against the reference: rows across several
// chunks of 64 input bytes, windows over the edges and wholly in the padding.
TEST(Pool2dKernel, EveryInt8MaxPoolKernelMatchesTheReference)
{
    std::mt19937 rng(33);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const ExecContext ctx(nullptr, 1);
    int checked_avx512 = 0;
    for (int trial = 0; trial < 300; ++trial) {
        Pool2dGeometry g;
        g.in_h = pick(1, 8), g.in_w = pick(0, 1) ? pick(1, 20) : pick(60, 200);
        g.kernel_h = pick(1, 4), g.kernel_w = pick(1, 4), g.stride_h = pick(1, 3), g.stride_w = pick(1, 3);
        g.pad_top = pick(0, 3), g.pad_left = pick(0, 3);
        const int64_t ph = g.in_h + g.pad_top + pick(0, 3), pw = g.in_w + g.pad_left + pick(0, 3);
        if (ph < g.kernel_h || pw < g.kernel_w) continue;
        g.out_h = (ph - g.kernel_h) / g.stride_h + 1, g.out_w = (pw - g.kernel_w) / g.stride_w + 1;
        const Tensor x = random_planes({1, g.in_h, g.in_w}, DType::I8, rng);
        std::vector<window::Axis> axes(2);
        axes[0].kernel = g.kernel_h, axes[0].stride = g.stride_h, axes[0].pad_begin = g.pad_top, axes[0].out = g.out_h;
        axes[1].kernel = g.kernel_w, axes[1].stride = g.stride_w, axes[1].pad_begin = g.pad_left, axes[1].out = g.out_w;
        Tensor want({1, g.out_h, g.out_w}, DType::I8);
        window::max_pool(x, axes, window::PoolConvention::Ncnn, want, nullptr, 0, false, ctx);
        for (const Int8MaxPoolKernel* kern : int8_max_pool_kernels_available(g)) {
            Tensor got({1, g.out_h, g.out_w}, DType::I8);
            kern->plane(x.data<int8_t>(), got.data<int8_t>(), g);
            ASSERT_TRUE(same_bytes(got, want)) << kern->isa << " trial " << trial << " in " << g.in_h << "x" << g.in_w
                                               << " kernel " << g.kernel_h << "x" << g.kernel_w << " stride "
                                               << g.stride_h << "x" << g.stride_w << " pads " << g.pad_top << ","
                                               << g.pad_left << " out " << g.out_h << "x" << g.out_w;
            checked_avx512 += std::string(kern->isa) == "avx512";
        }
    }
    if (cpu_has_avx512()) {
        EXPECT_GT(checked_avx512, 100);
    }
}

// Global pooling (one window over each whole plane): by blocks of planes
// across vectors and the planes after them, the reference's bits.
TEST(Pool2dKernel, GlobalPoolingMatchesTheReference)
{
    std::mt19937 rng(9);
    const ExecContext ctx(nullptr, 1);
    for (int64_t planes : {3, 16, 37})
        for (const auto& hw : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 7}, {13, 13}, {3, 5}}) {
            Pool2dGeometry g;
            g.in_h = hw.first, g.in_w = hw.second, g.kernel_h = g.in_h, g.kernel_w = g.in_w, g.out_h = 1, g.out_w = 1;
            g.count_y1 = g.in_h, g.count_x1 = g.in_w;
            const Tensor x = random_planes({planes, g.in_h, g.in_w}, DType::F32, rng);
            std::vector<window::Axis> axes(2);
            axes[0].kernel = g.in_h, axes[0].out = 1, axes[1].kernel = g.in_w, axes[1].out = 1;
            const std::vector<window::Span> counted = {{0, g.in_h}, {0, g.in_w}};
            Tensor got({planes, 1, 1}), want({planes, 1, 1});
            max_pool2d(x, g, got, ctx);
            window::max_pool(x, axes, window::PoolConvention::Ncnn, want, nullptr, 0, false, ctx);
            EXPECT_TRUE(same_bytes(got, want)) << "max, planes " << planes << " of " << g.in_h << "x" << g.in_w;
            average_pool2d(x, g, got, ctx);
            window::average_pool(x, axes, counted, window::PoolConvention::Ncnn, want, ctx);
            EXPECT_TRUE(same_bytes(got, want)) << "average, planes " << planes << " of " << g.in_h << "x" << g.in_w;
        }
}

} // namespace
} // namespace kestrel
