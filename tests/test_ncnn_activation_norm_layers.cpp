// ncnn's activation and normalization layers (AbsVal, BNLL, CELU, ELU, Erf,
// Exp, Log, Power, SELU, Shrink, Softplus, Threshold, PReLU, Bias,
// InstanceNorm, GroupNorm, RMSNorm, MVN, Normalize) against references
// written here from ncnn's formulas (src/layer/*.cpp), in double, with
// non-default params at every rank ncnn takes: within 1e-5 relative.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>

#include "layer_test_util.h"

namespace kestrel {
namespace {

using namespace layer_test;

const std::vector<Shape> kRanks = {{7}, {3, 5}, {2, 3, 4}, {2, 2, 3, 3}};

ParamDict F(std::initializer_list<std::pair<int, float>> kv)
{
    ParamDict pd;
    for (auto [k, v] : kv) pd.set_float(k, v);
    return pd;
}

// A one-input layer against f applied to each value, at every rank.
void expect_pointwise(const std::string& type, const ParamDict& pd, const std::function<double(double)>& f,
                      float lo = -3.f, float hi = 3.f)
{
    for (const Shape& s : kRanks) {
        const Tensor x = random_f32(s, 5, lo, hi);
        std::vector<double> want;
        for (float v : values<float>(x)) want.push_back(f(v));
        const Tensor y = run1(type, pd, {R(x)});
        EXPECT_EQ(y.shape(), s) << type;
        expect_near_all(y, want, type + " " + shape_str(s));
    }
}

TEST(NcnnActivations, MatchTheirFormulas)
{
    expect_pointwise("AbsVal", {}, [](double x) { return std::fabs(x); });
    expect_pointwise("BNLL", {}, [](double x) { return std::log(1 + std::exp(x)); });
    expect_pointwise("Softplus", {}, [](double x) { return std::log(1 + std::exp(x)); });
    expect_pointwise("Erf", {}, [](double x) { return std::erf(x); });
    expect_pointwise("ELU", F({{0, 0.7f}}), [](double x) { return x < 0 ? 0.7 * (std::exp(x) - 1) : x; });
    expect_pointwise("ELU", {}, [](double x) { return x < 0 ? 0.1 * (std::exp(x) - 1) : x; });
    expect_pointwise("CELU", F({{0, 0.5f}}), [](double x) { return x < 0 ? 0.5 * (std::exp(x / 0.5) - 1) : x; });
    expect_pointwise("SELU", F({{0, 1.5f}, {1, 1.2f}}),
                     [](double x) { return x < 0 ? 1.2 * 1.5 * (std::exp(x) - 1) : 1.2 * x; });
    expect_pointwise("Shrink", F({{0, 0.25f}, {1, 0.8f}}),
                     [](double x) { return x < -0.8 ? x + 0.25 : x > 0.8 ? x - 0.25 : 0.0; });
    expect_pointwise("Threshold", F({{0, 0.3f}}), [](double x) { return x > 0.3 ? 1.0 : 0.0; });
    expect_pointwise("Exp", F({{1, 0.5f}, {2, 0.25f}}), [](double x) { return std::exp(0.25 + 0.5 * x); });
    expect_pointwise("Exp", F({{0, 2.f}, {1, 0.5f}, {2, 0.25f}}), [](double x) { return std::pow(2.0, 0.25 + 0.5 * x); });
    expect_pointwise("Log", F({{1, 2.f}, {2, 7.f}}), [](double x) { return std::log(7 + 2 * x); });
    expect_pointwise("Log", F({{0, 10.f}, {1, 2.f}, {2, 7.f}}), [](double x) { return std::log10(7 + 2 * x); });
    expect_pointwise("Power", F({{0, 3.f}, {1, 0.5f}, {2, 1.f}}), [](double x) { return std::pow(1 + 0.5 * x, 3); });
    expect_pointwise("Power", F({{0, 0.5f}, {1, 2.f}, {2, 0.5f}}), [](double x) { return std::sqrt(0.5 + 2 * x); },
                     0.f, 3.f);
}

TEST(NcnnActivations, BadParams)
{
    const Tensor x = random_f32({4}, 1);
    EXPECT_TRUE(contains(error_of([&] { run1("CELU", F({{0, 0.f}}), {R(x)}); }), "alpha"));
    EXPECT_TRUE(contains(error_of([&] { run1("Exp", F({{0, -2.f}}), {R(x)}); }), "base (param 0)"));
    EXPECT_TRUE(contains(error_of([&] { run1("Log", F({{0, 1.f}}), {R(x)}); }), "base (param 0)"));
    EXPECT_TRUE(contains(error_of([&] { run1("ELU", {}, {R(i64v({1, 2}))}); }), "float32"));
}

// ncnn's channel of element i: rank 1 each element, else the outermost index.
int64_t channel_of(const Shape& s, int64_t i)
{
    return s.size() == 1 ? i : i / (shape_numel(s) / s[0]);
}

TEST(NcnnActivations, PReLUPerChannelAndShared)
{
    for (const Shape& s : kRanks) {
        const int64_t c = s[0];
        const Tensor x = random_f32(s, 8);
        const Tensor slopes = random_f32({c}, 9, 0.f, 0.5f);
        const Tensor y = run1("PReLU", P({{0, static_cast<int>(c)}}), {R(x)}, {slopes});
        const Tensor shared = run1("PReLU", P({{0, 1}}), {R(x)}, {f32({1}, {0.25f})});
        std::vector<double> want, want_shared;
        for (int64_t i = 0; i < x.numel(); ++i) {
            const double v = x.data<float>()[i];
            want.push_back(v < 0 ? v * slopes.data<float>()[channel_of(s, i)] : v);
            want_shared.push_back(v < 0 ? v * 0.25 : v);
        }
        expect_near_all(y, want, "PReLU " + shape_str(s));
        expect_near_all(shared, want_shared, "PReLU shared " + shape_str(s));
    }
    EXPECT_TRUE(contains(error_of([] { run1("PReLU", P({{0, 3}}), {R(random_f32({2, 4}, 1))}, {f32({3}, {1, 2, 3})}); }),
                         "num_slope"));
}

TEST(NcnnActivations, BiasPerChannel)
{
    // ncnn's c: ranks 3-4 per channel; ranks 1-2 are one channel.
    for (const Shape& s : kRanks) {
        const int64_t c = s.size() >= 3 ? s[0] : 1;
        const Tensor x = random_f32(s, 10);
        const Tensor bias = random_f32({c}, 11);
        const Tensor y = run1("Bias", P({{0, static_cast<int>(c)}}), {R(x)}, {bias});
        std::vector<double> want;
        for (int64_t i = 0; i < x.numel(); ++i)
            want.push_back(static_cast<double>(x.data<float>()[i]) + bias.data<float>()[s.size() >= 3 ? i / (x.numel() / c) : 0]);
        expect_near_all(y, want, "Bias " + shape_str(s));
    }
    EXPECT_TRUE(contains(error_of([] { run1("Bias", P({{0, 5}}), {R(random_f32({2, 3, 4}, 1))}, {random_f32({5}, 2)}); }),
                         "bias_data_size"));
}

// Normalizes each group of x (the elements group_of maps to one index) in
// double: mean (if centred), then the sum of squared deviations `ss` over
// `count`, scaled by scale(ss, count); then the affine step of element i.
std::vector<double> normalize_reference(const Tensor& x, const std::function<int64_t(int64_t)>& group_of, bool center,
                                        const std::function<double(double, double)>& scale,
                                        const std::function<double(int64_t, double)>& affine)
{
    const int64_t n = x.numel();
    std::map<int64_t, double> sum, ss, count;
    for (int64_t i = 0; i < n; ++i) {
        sum[group_of(i)] += x.data<float>()[i];
        count[group_of(i)] += 1;
    }
    for (int64_t i = 0; i < n; ++i) {
        const int64_t g = group_of(i);
        const double d = x.data<float>()[i] - (center ? sum[g] / count[g] : 0.0);
        ss[g] += d * d;
    }
    std::vector<double> y;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t g = group_of(i);
        const double d = x.data<float>()[i] - (center ? sum[g] / count[g] : 0.0);
        y.push_back(affine(i, d * scale(ss[g], count[g])));
    }
    return y;
}

double inv_std(double ss, double n, double eps) { return 1.0 / std::sqrt(ss / n + eps); }

TEST(NcnnNorms, InstanceNorm)
{
    for (const Shape& s : kRanks) {
        const int64_t c = s.size() >= 3 ? s[0] : 1, inner = shape_numel(s) / c;
        const Tensor x = random_f32(s, 12, -2.f, 3.f);
        const Tensor gamma = random_f32({c}, 13), beta = random_f32({c}, 14);
        ParamDict pd = P({{0, static_cast<int>(c)}});
        pd.set_float(1, 0.01f);
        const Tensor y = run1("InstanceNorm", pd, {R(x)}, {gamma, beta});
        const auto want = normalize_reference(
            x, [&](int64_t i) { return i / inner; }, true, [](double ss, double n) { return inv_std(ss, n, 0.01); },
            [&](int64_t i, double v) { return v * gamma.data<float>()[i / inner] + beta.data<float>()[i / inner]; });
        expect_near_all(y, want, "InstanceNorm " + shape_str(s));
        ParamDict plain = pd;
        plain.set_int(2, 0);
        const auto want_plain = normalize_reference(
            x, [&](int64_t i) { return i / inner; }, true, [](double ss, double n) { return inv_std(ss, n, 0.01); },
            [](int64_t, double v) { return v; });
        expect_near_all(run1("InstanceNorm", plain, {R(x)}), want_plain, "InstanceNorm affine=0 " + shape_str(s));
    }
    EXPECT_TRUE(contains(error_of([] {
        run1("InstanceNorm", P({{0, 3}}), {R(random_f32({2, 3, 4}, 1))}, {random_f32({3}, 2), random_f32({3}, 3)});
    }), "channels"));
}

TEST(NcnnNorms, GroupNorm)
{
    // The outermost axis (rank 1: elements, 2: rows, 3-4: channels) in groups.
    for (const Shape& base : kRanks) {
        Shape s = base;
        s[0] = 6;
        const int64_t c = 6, inner = shape_numel(s) / c;
        for (int group : {1, 2, 3}) {
            const Tensor x = random_f32(s, 15, -1.f, 4.f);
            const Tensor gamma = random_f32({c}, 16), beta = random_f32({c}, 17);
            ParamDict pd = P({{0, group}, {1, 6}});
            pd.set_float(2, 1e-4f);
            const Tensor y = run1("GroupNorm", pd, {R(x)}, {gamma, beta});
            const auto want = normalize_reference(
                x, [&](int64_t i) { return i / inner / (c / group); }, true,
                [](double ss, double n) { return inv_std(ss, n, 1e-4); },
                [&](int64_t i, double v) { return v * gamma.data<float>()[i / inner] + beta.data<float>()[i / inner]; });
            expect_near_all(y, want, "GroupNorm " + shape_str(s) + " groups " + std::to_string(group));
        }
    }
    EXPECT_TRUE(contains(error_of([] { run1("GroupNorm", P({{0, 4}, {1, 6}, {3, 0}}), {R(random_f32({6, 2}, 1))}); }),
                         "multiple"));
    EXPECT_TRUE(contains(error_of([] { run1("GroupNorm", P({{0, 4}, {1, 0}, {3, 0}}), {R(random_f32({6, 2}, 1))}); }),
                         "split"));
}

TEST(NcnnNorms, RMSNorm)
{
    struct Case {
        Shape s;
        int affine_size;
        int64_t group; // elements per group
    };
    for (const Case& k : std::vector<Case>{{{7}, 7, 7}, {{3, 5}, 5, 5}, {{2, 3, 4}, 4, 4}, {{2, 3, 4}, 12, 12},
                                           {{2, 2, 3, 3}, 3, 3}, {{2, 2, 3, 3}, 9, 9}, {{2, 2, 3, 3}, 18, 18}}) {
        const Tensor x = random_f32(k.s, 18);
        const Tensor gamma = random_f32({k.affine_size}, 19);
        ParamDict pd = P({{0, k.affine_size}});
        pd.set_float(1, 1e-3f);
        const Tensor y = run1("RMSNorm", pd, {R(x)}, {gamma});
        const auto want = normalize_reference(
            x, [&](int64_t i) { return i / k.group; }, false, [](double ss, double n) { return inv_std(ss, n, 1e-3); },
            [&](int64_t i, double v) { return v * gamma.data<float>()[i % k.group]; });
        expect_near_all(y, want, "RMSNorm " + shape_str(k.s) + " affine_size " + std::to_string(k.affine_size));
    }
}

TEST(NcnnNorms, MVN)
{
    for (const Shape& s : kRanks) {
        const int64_t c = s.size() >= 3 ? s[0] : 1, inner = shape_numel(s) / c;
        const Tensor x = random_f32(s, 20, -1.f, 5.f);
        for (int across : {0, 1})
            for (int variance : {0, 1}) {
                ParamDict pd = P({{0, variance}, {1, across}});
                pd.set_float(2, 0.01f);
                const Tensor y = run1("MVN", pd, {R(x)});
                Shape expected = s;
                if (expected.size() < 3) expected.insert(expected.begin(), 3 - expected.size(), 1);
                EXPECT_EQ(y.shape(), expected);
                const auto want = normalize_reference(
                    x, [&](int64_t i) { return across ? 0 : i / inner; }, true,
                    [&](double ss, double n) { return variance ? 1.0 / (std::sqrt(ss / n) + 0.01) : 1.0; },
                    [](int64_t, double v) { return v; });
                expect_near_all(y, want, "MVN " + shape_str(s));
            }
    }
}

TEST(NcnnNorms, Normalize)
{
    for (const Shape& s : {Shape{2, 3, 4}, Shape{3, 2, 2, 3}, Shape{3, 5}}) {
        const int64_t c = s.size() >= 3 ? s[0] : 1, inner = shape_numel(s) / c;
        const Tensor x = random_f32(s, 21);
        for (int spatial : {0, 1})
            for (int channel : {0, 1})
                for (int shared : {0, 1})
                    for (int mode : {0, 1, 2}) {
                        const Tensor scale = shared ? f32({1}, {1.5f}) : random_f32({c}, 22, 0.5f, 2.f);
                        ParamDict pd = P({{0, spatial}, {4, channel}, {1, shared}, {9, mode}, {3, shared ? 1 : static_cast<int>(c)}});
                        pd.set_float(2, 0.05f);
                        const Tensor y = run1("Normalize", pd, {R(x)}, {scale});
                        auto norm = [&](double ss, double) {
                            return mode == 0 ? 1.0 / std::sqrt(ss + 0.05)
                                 : mode == 1 ? 1.0 / std::max(std::sqrt(ss), 0.05) : 1.0 / std::sqrt(std::max(ss, 0.05));
                        };
                        std::vector<double> want;
                        if (!spatial && !channel) {
                            for (float v : values<float>(x)) want.push_back(v);
                        } else {
                            want = normalize_reference(
                                x,
                                [&](int64_t i) { return spatial && channel ? 0 : spatial ? i / inner : i % inner; },
                                false, norm,
                                [&](int64_t i, double v) { return v * scale.data<float>()[shared ? 0 : i / inner]; });
                        }
                        expect_near_all(y, want, "Normalize " + shape_str(s));
                    }
    }
}

} // namespace
} // namespace kestrel
