// The exp-based activation kernels (kernels/activations.h), every one this
// CPU runs, against the functions in double: accuracy over the whole float
// range (in units in the last place), the edges (overflow, subnormal results,
// infinities, NaN), every tail length, and position independence (a value
// gives the same bits wherever it sits, so splitting work between threads
// changes nothing).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/activations.h"
#include "ops/activation/activation.h"
#include "layer_test_util.h"

namespace kestrel {
namespace {

using Fn = ExpActivation;
constexpr float kInf = std::numeric_limits<float>::infinity();

double reference(Fn f, double x)
{
    switch (f) {
    case Fn::Exp: return std::exp(x);
    case Fn::Sigmoid: {
        const double bound = 88.3762626647949f; // the float the kernel clamps to
        return 1.0 / (1.0 + std::exp(-std::min(std::max(x, -bound), bound)));
    }
    case Fn::Swish: return x / (1.0 + std::exp(-x));
    case Fn::Mish: return x * std::tanh(std::log1p(std::exp(x)));
    case Fn::GeluTanh: // x/2 (1 + tanh(u)) without 1 + tanh(u) cancelling to 0 for x << 0
        return x / (1.0 + std::exp(-2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)));
    }
    return 0.0;
}

const char* name(Fn f)
{
    static const char* names[] = {"exp", "sigmoid", "swish", "mish", "gelu_tanh"};
    return names[static_cast<int>(f)];
}

// Distance in units in the last place of the float nearest `want`.
double ulps(float got, double want)
{
    const float near = static_cast<float>(want);
    const double ulp = std::nextafter(std::fabs(near), kInf) - std::fabs(near);
    return std::fabs(got - want) / ulp;
}

std::vector<float> sweep(float lo, float hi, int count)
{
    std::vector<float> xs;
    for (int i = 0; i <= count; ++i) xs.push_back(lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(count));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(lo, hi);
    for (int i = 0; i < count; ++i) xs.push_back(u(rng));
    return xs;
}

const Fn kAll[] = {Fn::Exp, Fn::Sigmoid, Fn::Swish, Fn::Mish, Fn::GeluTanh};

TEST(ActivationKernels, WithinAFewUlpsOverTheFloatRange)
{
    // Measured on x86-64 (all three ISAs): exp 0.99 ulps, sigmoid 2.2, swish
    // 2.9, mish 3.7; each adds a division (mish more) to exp's error. GELU's
    // exp argument z = 1.596 (x + 0.0447 x^3) is itself rounded (four
    // roundings, about 1.5 ulps of z), which e^-|z| turns into up to 3|z| ulps
    // of the result (176 at x = -9.27, where the result is 7e-31).
    auto max_ulps = [](Fn f, float x) {
        const double bound[] = {1.5, 3.0, 3.5, 4.5, 4.0};
        const double z = 1.5957691216057308 * (x + 0.044715 * x * x * x);
        return bound[static_cast<int>(f)] + (f == Fn::GeluTanh ? 3 * std::fabs(z) : 0.0);
    };
    const std::vector<float> xs = sweep(-103.f, 88.7f, 200000);
    for (const ActivationKernel* k : activation_kernels_available())
        for (Fn f : kAll) {
            std::vector<float> y(xs.size());
            k->map_exp(f, xs.data(), y.data(), static_cast<int64_t>(xs.size()));
            double worst = 0;
            int bad = 0;
            for (size_t i = 0; i < xs.size(); ++i) {
                const double want = reference(f, xs[i]);
                // Results near or below the normal range may come from
                // subnormal intermediates or flush to 0 (as with FTZ): hold
                // them to an absolute bound of the smallest normal float.
                const bool subnormal = std::fabs(want) < 1e-36;
                const double err = subnormal ? std::fabs(y[i] - want) / std::numeric_limits<float>::min()
                                             : ulps(y[i], want);
                if (!subnormal) worst = std::max(worst, err);
                if (!(err <= max_ulps(f, xs[i])) && ++bad <= 5)
                    ADD_FAILURE() << k->isa << " " << name(f) << "(" << xs[i] << ") = " << y[i] << ", expected "
                                  << want << " (" << err << " ulps)";
            }
            EXPECT_EQ(bad, 0) << k->isa << " " << name(f);
            RecordProperty(std::string(k->isa) + "_" + name(f) + "_max_ulps", std::to_string(worst));
        }
}

TEST(ActivationKernels, EdgesInfinitiesAndNaN)
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> xs = {nan, kInf, -kInf, 89.f, 88.72f, -104.f, -200.f, 0.f, -0.f, 1e-30f};
    for (const ActivationKernel* k : activation_kernels_available()) {
        SCOPED_TRACE(k->isa);
        auto run = [&](Fn f) {
            std::vector<float> y(xs.size());
            k->map_exp(f, xs.data(), y.data(), static_cast<int64_t>(xs.size()));
            return y;
        };
        const std::vector<float> e = run(Fn::Exp), s = run(Fn::Sigmoid), w = run(Fn::Swish), m = run(Fn::Mish),
                                 g = run(Fn::GeluTanh);
        for (const auto* y : {&e, &s, &w, &m, &g}) EXPECT_TRUE(std::isnan((*y)[0]));
        EXPECT_EQ(g[1], kInf);
        EXPECT_EQ(g[3], 89.f);
        EXPECT_EQ(e[1], kInf);
        EXPECT_EQ(e[2], 0.f);
        EXPECT_EQ(e[3], kInf);
        EXPECT_TRUE(std::isfinite(e[4]));
        EXPECT_NEAR(e[4], std::exp(double{88.72f}), std::exp(double{88.72f}) * 1e-6);
        EXPECT_EQ(e[5], 0.f);
        EXPECT_EQ(e[6], 0.f);
        EXPECT_EQ(e[7], 1.f);
        EXPECT_EQ(e[8], 1.f);
        EXPECT_EQ(s[1], 1.f);
        // ncnn clamps sigmoid's input, so -inf gives 1 / (1 + e^88.376), not 0.
        EXPECT_GT(s[2], 0.f);
        EXPECT_NEAR(s[2], reference(Fn::Sigmoid, -1e9), 1e-45);
        EXPECT_EQ(w[1], kInf);
        EXPECT_EQ(m[1], kInf);
        EXPECT_EQ(m[3], 89.f); // tanh(softplus(x)) is 1 in float long before
        EXPECT_EQ(w[9], xs[9] / 2) << "swish(x) is x/2 near 0";
        EXPECT_EQ(std::signbit(w[8]), true) << "swish(-0) is -0";
    }
}

// Tails of every length, unaligned starts, in place, and nothing written past n.
TEST(ActivationKernels, TailsInPlaceAndPositionIndependence)
{
    const Tensor src = layer_test::random_f32({64}, 11, -12.f, 12.f);
    const float* x = src.data<float>();
    for (const ActivationKernel* k : activation_kernels_available())
        for (Fn f : kAll)
            for (int64_t n = 0; n <= 50; ++n) {
                SCOPED_TRACE(::testing::Message() << k->isa << " " << name(f) << " n=" << n);
                const int64_t start = n % 3; // unaligned starts
                std::vector<float> y(static_cast<size_t>(n + 1), 12345.f);
                k->map_exp(f, x + start, y.data(), n);
                EXPECT_EQ(y[static_cast<size_t>(n)], 12345.f) << "wrote past n";
                std::vector<float> inplace(x + start, x + start + n);
                k->map_exp(f, inplace.data(), inplace.data(), n);
                for (int64_t i = 0; i < n; ++i) {
                    float alone;
                    k->map_exp(f, x + start + i, &alone, 1);
                    ASSERT_EQ(std::memcmp(&alone, &y[i], 4), 0) << "value " << i << " depends on its position";
                    ASSERT_EQ(std::memcmp(&inplace[i], &y[i], 4), 0) << "in place differs at " << i;
                }
            }
}

// The layers that run on these kernels give the same bits at any thread count.
TEST(ActivationKernels, LayersAreBitIdenticalAcrossThreadCounts)
{
    const Tensor x = layer_test::random_f32({3, 37, 41}, 5, -9.f, 9.f);
    const ParamDict none, fast = layer_test::P({{0, 1}});
    const std::pair<const char*, const ParamDict*> layers[] = {
        {"Sigmoid", &none}, {"Swish", &none}, {"Mish", &none}, {"GELU", &fast}, {"Softmax", &none}};
    for (const auto& [type, pd] : layers) {
        SCOPED_TRACE(type);
        const Tensor one = layer_test::run_layer(type, *pd, {layer_test::R(x)}, 1, {}, 1)[0];
        const Tensor three = layer_test::run_layer(type, *pd, {layer_test::R(x)}, 1, {}, 3)[0];
        ASSERT_EQ(one.numel(), three.numel());
        EXPECT_EQ(std::memcmp(one.data<float>(), three.data<float>(), static_cast<size_t>(one.numel()) * 4), 0);
    }
}


// The piecewise kernels against the scalar forms the fused activations were
// defined by (Activation::eval), bit for bit: edges (±0, ±inf, NaN, the
// HardSwish breakpoints), random values, every tail length.
TEST(ActivationKernels, PiecewiseKernelsMatchTheScalarFormsBitForBit)
{
    std::vector<float> xs = {0.f, -0.f, 1.f, -1.f, kInf, -kInf, std::numeric_limits<float>::quiet_NaN(),
                             -3.f, 3.f, -2.5f, 2.5f, 1e-40f, -1e-40f, 0.5f};
    const Tensor r = layer_test::random_f32({301}, 17, -8.f, 8.f);
    xs.insert(xs.end(), r.data<float>(), r.data<float>() + r.numel());
    struct Case {
        PiecewiseActivation f;
        int type;
        float a, b;
    };
    const Case cases[] = {
        {PiecewiseActivation::LeakyReLU, Activation::LeakyReLU, 0.1f, 0.f},
        {PiecewiseActivation::LeakyReLU, Activation::LeakyReLU, -0.3f, 0.f},
        {PiecewiseActivation::Clip, Activation::Clip, -0.5f, 6.f},
        {PiecewiseActivation::Clip, Activation::Clip, 0.f, INFINITY}, // ReLU
        {PiecewiseActivation::HardSwish, Activation::HardSwish, 1.f / 6.f, 0.5f},
        {PiecewiseActivation::HardSwish, Activation::HardSwish, 0.2f, 0.5f},
    };
    for (const ActivationKernel* k : activation_kernels_available())
        for (const Case& c : cases)
            for (size_t n : {xs.size(), size_t{1}, size_t{7}, size_t{17}}) {
                SCOPED_TRACE(::testing::Message() << k->isa << " type " << c.type << " a=" << c.a << " n=" << n);
                Activation act;
                act.type = c.type, act.a = c.a, act.b = c.b;
                std::vector<float> y(n + 1, 12345.f);
                k->map_piecewise(c.f, c.a, c.b, xs.data(), y.data(), static_cast<int64_t>(n));
                EXPECT_EQ(y[n], 12345.f) << "wrote past n";
                for (size_t i = 0; i < n; ++i) {
                    const float want = act(xs[i]);
                    ASSERT_EQ(std::memcmp(&want, &y[i], 4), 0) << "x=" << xs[i] << ": " << y[i] << ", scalar " << want;
                }
            }
}
// LRN across channels with beta 3/4 (one output plane from the window's
// planes): within 1e-6 relative of the formula in double, for 1 to 5 planes,
// every tail length, and the same bits wherever a value sits.
TEST(ActivationKernels, LrnAcrossChannelsMatchesDouble)
{
    const Tensor values = layer_test::random_f32({5 * 40}, 23, -3.f, 3.f);
    const float* v = values.data<float>();
    const float bias = 1.5f, alpha = 0.4f;
    for (const ActivationKernel* k : activation_kernels_available())
        for (int count : {1, 3, 5})
            for (int64_t n : {40, 1, 7, 17}) {
                SCOPED_TRACE(::testing::Message() << k->isa << " planes=" << count << " n=" << n);
                std::vector<const float*> planes;
                for (int p = 0; p < count; ++p) planes.push_back(v + p * 40);
                const float* x = v + (count / 2) * 40;
                std::vector<float> y(static_cast<size_t>(n + 1), 12345.f);
                k->lrn_across_channels(planes.data(), count, x, bias, alpha, y.data(), n);
                EXPECT_EQ(y[static_cast<size_t>(n)], 12345.f) << "wrote past n";
                for (int64_t i = 0; i < n; ++i) {
                    double sum = 0;
                    for (int p = 0; p < count; ++p) sum += double(planes[p][i]) * planes[p][i];
                    const double want = x[i] * std::pow(bias + alpha * sum, -0.75);
                    ASSERT_NEAR(y[static_cast<size_t>(i)], want, 1e-6 * std::fabs(want)) << i;
                }
                // A value's bits do not depend on its position (the tail takes the vector code).
                if (n == 40) {
                    std::vector<float> shifted(7);
                    std::vector<const float*> later;
                    for (const float* p : planes) later.push_back(p + 33);
                    k->lrn_across_channels(later.data(), count, x + 33, bias, alpha, shifted.data(), 7);
                    ASSERT_EQ(std::memcmp(shifted.data(), y.data() + 33, 7 * sizeof(float)), 0);
                }
            }
}
} // namespace
} // namespace kestrel
