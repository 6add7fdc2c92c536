// Normalizations (LayerNorm's ONNX form), reductions with run-time axes (Reduction's axes input),
// Interp's ONNX form (Resize) with run-time targets and tf_crop_and_resize, Gemm's ONNX alpha/beta.
// Expectations come from naive references written here from the ONNX operator
// formulas (every output element computed on its own by plain loops over the
// input), or from values worked out by hand; never from the layers' code.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstring>
#include <functional>
#include <tuple>
#include <random>
#include <string>
#include <vector>

#include "kestrel/kestrel.h"
#include "layer_test_util.h"
#include "onnx_test_graph.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#include "onnx/onnx_pb.h"
#endif

using namespace kestrel;

namespace {

using kestrel::layer_test::error_of;

// ---- helpers ----------------------------------------------------------------

::testing::AssertionResult has_text(const std::string& message, const std::string& part)
{
    if (message.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "'" << message << "' does not mention '" << part << "'";
}

using layer_test::random_f32;

Tensor floats(const Shape& s, const std::vector<float>& v)
{
    Tensor t(s, DType::F32);
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
}

Tensor int64s(const std::vector<int64_t>& v)
{
    Tensor t({static_cast<int64_t>(v.size())}, DType::I64);
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return t;
}

bool same_bits(const Tensor& a, const Tensor& b)
{
    return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

std::vector<double> doubles_of(const Tensor& t)
{
    const Tensor d = t.to(DType::F64);
    return std::vector<double>(d.data<double>(), d.data<double>() + d.numel());
}

// Row-major coordinates of a flat index.
std::vector<int64_t> coords(int64_t flat, const Shape& s)
{
    std::vector<int64_t> c(s.size());
    for (size_t k = s.size(); k-- > 0;) {
        c[k] = flat % s[k];
        flat /= s[k];
    }
    return c;
}

::testing::AssertionResult near_all(const Tensor& got, const Shape& shape, const std::vector<double>& want, double tol)
{
    if (got.shape() != shape)
        return ::testing::AssertionFailure() << "shape " << shape_str(got.shape()) << ", expected " << shape_str(shape);
    const std::vector<double> g = doubles_of(got);
    if (g.size() != want.size()) return ::testing::AssertionFailure() << g.size() << " values, expected " << want.size();
    for (size_t i = 0; i < g.size(); ++i)
        if (!(std::fabs(g[i] - want[i]) <= tol * (1 + std::fabs(want[i]))))
            return ::testing::AssertionFailure() << "value[" << i << "] = " << g[i] << ", expected " << want[i];
    return ::testing::AssertionSuccess();
}

// Runs one layer whose inputs are all graph inputs fed at run time, except
// those listed in `planned`, which are Constant layers (known while planning).
std::vector<Tensor> run_op(const std::string& type, const ParamDict& pd, const std::vector<Tensor>& inputs,
                           int outputs = 1, const std::vector<size_t>& planned = {}, int threads = 1)
{
    Net net;
    std::vector<std::string> bottoms, tops;
    for (size_t i = 0; i < inputs.size(); ++i) {
        bottoms.push_back("in" + std::to_string(i));
        if (std::find(planned.begin(), planned.end(), i) == planned.end()) {
            net.add_layer("Input", bottoms.back(), {}, {bottoms.back()});
            continue;
        }
        ParamDict cpd;
        cpd.set_int(0, static_cast<int>(inputs[i].dtype()));
        std::vector<int> dims(inputs[i].shape().begin(), inputs[i].shape().end());
        if (!dims.empty()) cpd.set_ints(1, dims);
        net.add_layer("Constant", bottoms.back(), {}, {bottoms.back()}, cpd, {inputs[i]});
    }
    for (int i = 0; i < outputs; ++i) tops.push_back("out" + std::to_string(i));
    net.add_layer(type, "op", bottoms, tops, pd);
    net.finish_graph();
    Options options;
    options.threads = threads;
    Session s(net, options);
    for (size_t i = 0; i < inputs.size(); ++i)
        if (std::find(planned.begin(), planned.end(), i) == planned.end()) s.set_input(bottoms[i], inputs[i]);
    return s.run(tops);
}

ParamDict params(std::initializer_list<std::pair<int, int>> ints)
{
    ParamDict pd;
    for (auto [id, v] : ints) pd.set_int(id, v);
    return pd;
}

// ---- LayerNorm, ONNX form ---------------------------------------------------------

// Naive normalization: each element's group is every element that agrees with
// it outside `axes`; scale/bias are looked up by `affine_index`.
struct NormReference {
    std::vector<double> y, mean, inv_std;
};
NormReference normalize_reference(const Tensor& x, const std::vector<int>& axes, double eps, bool eps_outside,
                                  const std::function<double(const std::vector<int64_t>&)>& scale,
                                  const std::function<double(const std::vector<int64_t>&)>& bias)
{
    const Shape& s = x.shape();
    const std::vector<double> v = doubles_of(x);
    auto in_group = [&](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
        for (size_t k = 0; k < s.size(); ++k)
            if (std::find(axes.begin(), axes.end(), static_cast<int>(k)) == axes.end() && a[k] != b[k]) return false;
        return true;
    };
    NormReference r;
    for (int64_t i = 0; i < x.numel(); ++i) {
        const std::vector<int64_t> ci = coords(i, s);
        double sum = 0, n = 0;
        for (int64_t j = 0; j < x.numel(); ++j)
            if (in_group(ci, coords(j, s))) {
                sum += v[j];
                n += 1;
            }
        const double mean = sum / n;
        double sq = 0;
        for (int64_t j = 0; j < x.numel(); ++j)
            if (in_group(ci, coords(j, s))) sq += (v[j] - mean) * (v[j] - mean);
        const double var = sq / n;
        const double inv = eps_outside ? 1 / (std::sqrt(var) + eps) : 1 / std::sqrt(var + eps);
        r.y.push_back((v[i] - mean) * inv * scale(ci) + bias(ci));
        // Statistics are listed once per group: at the group's first element.
        bool first = true;
        for (int64_t j = 0; j < i && first; ++j) first = !in_group(ci, coords(j, s));
        if (first) {
            r.mean.push_back(mean);
            r.inv_std.push_back(inv);
        }
    }
    return r;
}

TEST(NormsNormalize, LayerNormOverTrailingAxesWithStatistics)
{
    const Tensor x = random_f32({2, 3, 4}, 1);
    for (int axis : {0, 1, 2}) {
        std::vector<int> axes;
        Shape affine, stats = x.shape();
        for (int k = axis; k < 3; ++k) {
            axes.push_back(k);
            affine.push_back(x.shape()[k]);
            stats[k] = 1;
        }
        const Tensor scale = random_f32(affine, 2), bias = random_f32(affine, 3);
        // Scale/bias cover the normalized shape, aligned to the end of X.
        auto at = [&](const Tensor& t, const std::vector<int64_t>& c) {
            int64_t flat = 0;
            for (int k = axis; k < 3; ++k) flat = flat * x.shape()[k] + c[k];
            return static_cast<double>(t.data<float>()[flat]);
        };
        const NormReference want = normalize_reference(
            x, axes, 1e-3, false, [&](const auto& c) { return at(scale, c); }, [&](const auto& c) { return at(bias, c); });
        ParamDict pd = params({{20, 1}});
        pd.set_ints(21, std::vector<int>(axes.begin(), axes.end()));
        pd.set_float(22, 1e-3f);
        const std::vector<Tensor> out = run_op("LayerNorm", pd, {x, scale, bias}, 3);
        EXPECT_TRUE(near_all(out[0], x.shape(), want.y, 1e-5)) << "axis " << axis;
        EXPECT_TRUE(near_all(out[1], stats, want.mean, 1e-5)) << "axis " << axis;
        EXPECT_TRUE(near_all(out[2], stats, want.inv_std, 1e-5)) << "axis " << axis;
        EXPECT_EQ(out[1].dtype(), DType::F32);
    }
}

TEST(NormsNormalize, BroadcastScaleNegativeAxesAndNoBias)
{
    const Tensor x = random_f32({2, 3, 4}, 4);
    const Tensor scale = random_f32({4}, 5); // broadcast over the normalized (3, 4)
    const NormReference want = normalize_reference(
        x, {1, 2}, 1e-5, false, [&](const auto& c) { return static_cast<double>(scale.data<float>()[c[2]]); },
        [](const auto&) { return 0.0; });
    ParamDict pd = params({{20, 1}});
    pd.set_ints(21, {-2, -1});
    EXPECT_TRUE(near_all(run_op("LayerNorm", pd, {x, scale})[0], x.shape(), want.y, 1e-5));
}

TEST(NormsNormalize, InstanceNormPerChannel)
{
    const Tensor x = random_f32({2, 3, 2, 5}, 6), scale = random_f32({3}, 7), bias = random_f32({3}, 8);
    const NormReference want = normalize_reference(
        x, {2, 3}, 1e-2, false, [&](const auto& c) { return static_cast<double>(scale.data<float>()[c[1]]); },
        [&](const auto& c) { return static_cast<double>(bias.data<float>()[c[1]]); });
    ParamDict pd = params({{20, 1}, {24, 1}});
    pd.set_ints(21, {2, 3});
    pd.set_float(22, 1e-2f);
    // Scale and bias known while planning or only at run time give the same result.
    EXPECT_TRUE(near_all(run_op("LayerNorm", pd, {x, scale, bias})[0], x.shape(), want.y, 1e-5));
    EXPECT_TRUE(near_all(run_op("LayerNorm", pd, {x, scale, bias}, 1, {1, 2})[0], x.shape(), want.y, 1e-5));
}

TEST(NormsNormalize, MeanVarianceEpsilonOutsideTheRoot)
{
    // One channel of constant values: var = 0, so the epsilon placement shows.
    Tensor x = random_f32({3, 2, 2, 1}, 9);
    for (int i = 4; i < 8; ++i) x.data<float>()[i] = 1.5f;
    const NormReference want = normalize_reference(
        x, {0, 2, 3}, 0.5, true, [](const auto&) { return 1.0; }, [](const auto&) { return 0.0; });
    ParamDict pd = params({{20, 1}, {23, 1}});
    pd.set_ints(21, {0, 2, 3});
    pd.set_float(22, 0.5f);
    EXPECT_TRUE(near_all(run_op("LayerNorm", pd, {x})[0], x.shape(), want.y, 1e-5));
}

// Statistics over axes that are not adjacent, with groups split across
// threads: the reference's values, and the same bits at every thread count.
TEST(NormsNormalize, ScatteredAxesAnyThreadCount)
{
    const Tensor x = random_f32({3, 5, 4, 6}, 30);
    for (const std::vector<int>& axes : std::vector<std::vector<int>>{{1, 3}, {0, 2}, {0, 1, 2, 3}, {3}}) {
        const NormReference want = normalize_reference(
            x, axes, 1e-5, false, [](const auto&) { return 1.0; }, [](const auto&) { return 0.0; });
        ParamDict pd = params({{20, 1}});
        pd.set_ints(21, axes);
        const std::vector<Tensor> one = run_op("LayerNorm", pd, {x}, 3);
        EXPECT_TRUE(near_all(one[0], x.shape(), want.y, 1e-5)) << axes.size() << " axes from " << axes[0];
        EXPECT_TRUE(near_all(one[1].to(DType::F64), one[1].shape(), want.mean, 1e-6));
        for (int threads : {2, 3, 4}) {
            const std::vector<Tensor> many = run_op("LayerNorm", pd, {x}, 3, {}, threads);
            for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(same_bits(one[i], many[i])) << threads << " threads, output " << i;
        }
    }
}

TEST(NormsNormalize, GivenStatisticsPerChannel)
{
    const Tensor x = random_f32({2, 3, 4}, 10), scale = random_f32({3}, 11), bias = random_f32({3}, 12);
    const Tensor mean = random_f32({3}, 13), var = random_f32({3}, 14, 0.1f, 2.f);
    std::vector<double> want;
    for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t c = coords(i, x.shape())[1];
        want.push_back((x.data<float>()[i] - mean.data<float>()[c]) / std::sqrt(var.data<float>()[c] + 0.01) *
                           scale.data<float>()[c] +
                       bias.data<float>()[c]);
    }
    ParamDict pd = params({{20, 1}, {24, 1}, {25, 1}});
    pd.set_float(22, 0.01f);
    EXPECT_TRUE(near_all(run_op("LayerNorm", pd, {x, scale, bias, mean, var})[0], x.shape(), want, 1e-5));
}

TEST(NormsNormalize, DoubleAndHalfInputs)
{
    const Tensor x32 = random_f32({3, 4}, 15);
    const NormReference want = normalize_reference(
        x32, {1}, 1e-5, false, [](const auto&) { return 1.0; }, [](const auto&) { return 0.0; });
    ParamDict pd = params({{20, 1}});
    pd.set_ints(21, {1});
    const Tensor y64 = run_op("LayerNorm", pd, {x32.to(DType::F64)})[0];
    EXPECT_EQ(y64.dtype(), DType::F64);
    EXPECT_TRUE(near_all(y64, x32.shape(), want.y, 1e-12 + 1e-6));
    const Tensor y16 = run_op("LayerNorm", pd, {x32.to(DType::F16)})[0];
    EXPECT_EQ(y16.dtype(), DType::F16);
    EXPECT_TRUE(near_all(y16, x32.shape(), want.y, 1e-2)); // input and output rounded to half
}

TEST(NormsNormalize, RejectsBadShapesDtypesAndParams)
{
    const Tensor x = random_f32({2, 3, 4}, 16);
    ParamDict pd = params({{20, 1}});
    pd.set_ints(21, {2});
    EXPECT_TRUE(has_text(error_of([&] { run_op("LayerNorm", pd, {x, random_f32({3}, 1)}); }), "does not broadcast"));
    ParamDict channel = params({{20, 1}, {24, 1}});
    channel.set_ints(21, {2});
    EXPECT_TRUE(has_text(error_of([&] { run_op("LayerNorm", channel, {x, random_f32({4}, 1)}); }),
                         "per-channel operands must have shape (3)"));
    ParamDict far = params({{20, 1}});
    far.set_ints(21, {3});
    EXPECT_TRUE(has_text(error_of([&] { run_op("LayerNorm", far, {x}); }), "out of range"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("LayerNorm", pd, {int64s({1, 2})}); }), "must be a float tensor"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("LayerNorm", params({{20, 1}, {24, 2}}), {x}); }), "param 24"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("LayerNorm", params({{20, 1}, {25, 1}}), {x}); }), "per-channel layout"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("LayerNorm", params({{20, 1}, {24, 1}, {25, 1}}), {x}); }), "5 input"));
}

// ---- Reduction, ONNX form ---------------------------------------------------------------

// Naive reduction of x over `axes` (all when empty) for the operation code.
std::vector<double> reduce_reference(const Tensor& x, std::vector<int> axes, int op, Shape* out_shape, bool keepdims)
{
    const Shape& s = x.shape();
    if (axes.empty())
        for (size_t k = 0; k < s.size(); ++k) axes.push_back(static_cast<int>(k));
    auto reduced = [&](size_t k) { return std::find(axes.begin(), axes.end(), static_cast<int>(k)) != axes.end(); };
    Shape kept_shape;
    out_shape->clear();
    for (size_t k = 0; k < s.size(); ++k) {
        kept_shape.push_back(reduced(k) ? 1 : s[k]);
        if (!reduced(k) || keepdims) out_shape->push_back(reduced(k) ? 1 : s[k]);
    }
    const std::vector<double> v = doubles_of(x);
    std::vector<double> out;
    for (int64_t o = 0; o < shape_numel(kept_shape); ++o) {
        const std::vector<int64_t> oc = coords(o, kept_shape);
        std::vector<double> group;
        for (int64_t i = 0; i < x.numel(); ++i) {
            const std::vector<int64_t> ic = coords(i, s);
            bool match = true;
            for (size_t k = 0; k < s.size(); ++k) match = match && (reduced(k) || ic[k] == oc[k]);
            if (match) group.push_back(v[i]);
        }
        double r = 0;
        switch (op) {
        case 0: for (double g : group) r += g; break;
        case 2: for (double g : group) r += g * g; break;
        case 3: for (double g : group) r += g / static_cast<double>(group.size()); break;
        case 4: r = *std::max_element(group.begin(), group.end()); break;
        case 5: r = *std::min_element(group.begin(), group.end()); break;
        case 6: r = 1; for (double g : group) r *= g; break;
        case 7: for (double g : group) r += std::fabs(g); break;
        case 8: for (double g : group) r += g * g; r = std::sqrt(r); break;
        case 9: for (double g : group) r += g; r = std::log(r); break;
        case 10: for (double g : group) r += std::exp(g); r = std::log(r); break;
        }
        out.push_back(r);
    }
    return out;
}

TEST(NormsReduce, EveryOperationWithRunTimeAndPlannedAxes)
{
    const Tensor x = random_f32({2, 3, 4}, 20, 0.1f, 2.f); // positive: LogSum is defined
    const std::vector<std::vector<int>> axis_sets = {{1}, {0, 2}, {-1}, {0, 1, 2}};
    for (int op : {0, 2, 3, 4, 5, 6, 7, 8, 9, 10}) {
        for (const auto& axes : axis_sets) {
            for (int keepdims : {0, 1}) {
                std::vector<int> positive;
                for (int a : axes) positive.push_back(a < 0 ? a + 3 : a);
                Shape shape;
                const std::vector<double> want = reduce_reference(x, positive, op, &shape, keepdims);
                const Tensor axes_t = int64s(std::vector<int64_t>(axes.begin(), axes.end()));
                const ParamDict pd = params({{0, op}, {4, keepdims}, {20, 1}, {21, 1}});
                const std::string what = "op " + std::to_string(op) + " keepdims " + std::to_string(keepdims);
                EXPECT_TRUE(near_all(run_op("Reduction", pd, {x, axes_t})[0], shape, want, 1e-5)) << what;
                EXPECT_TRUE(near_all(run_op("Reduction", pd, {x, axes_t}, 1, {1})[0], shape, want, 1e-5)) << what;
            }
        }
    }
}

// Axis sets that leave gaps, merge, or cover everything, on a 4-D input with
// outputs split across threads: the reference's values, the same bits at every
// thread count. A zero-sized reduced axis gives the operation's identity.
TEST(NormsReduce, ScatteredAxesAnyThreadCountAndEmptyGroups)
{
    const Tensor x = random_f32({3, 5, 4, 6}, 31, 0.1f, 2.f);
    const std::vector<std::vector<int>> axis_sets = {{0, 2}, {1, 3}, {2, 3}, {0}, {1, 2}, {0, 1, 2, 3}};
    for (int op : {0, 3, 4, 8, 10}) {
        for (const auto& axes : axis_sets) {
            Shape shape;
            const std::vector<double> want = reduce_reference(x, axes, op, &shape, true);
            const Tensor axes_t = int64s(std::vector<int64_t>(axes.begin(), axes.end()));
            const ParamDict pd = params({{0, op}, {21, 1}});
            const Tensor one = run_op("Reduction", pd, {x, axes_t}, 1, {1})[0];
            EXPECT_TRUE(near_all(one, shape, want, 1e-5)) << "op " << op << ", first axis " << axes[0];
            for (int threads : {2, 3})
                EXPECT_TRUE(same_bits(one, run_op("Reduction", pd, {x, axes_t}, 1, {1}, threads)[0]))
                    << "op " << op << ", " << threads << " threads";
        }
    }
    const Tensor empty({2, 0, 3}, DType::F32);
    const Tensor sum = run_op("Reduction", params({{0, 0}, {4, 0}, {21, 1}}), {empty, int64s({1})}, 1, {1}, 2)[0];
    EXPECT_TRUE(near_all(sum, Shape{2, 3}, std::vector<double>(6, 0.0), 0));
    const Tensor prod = run_op("Reduction", params({{0, 6}, {4, 0}, {21, 1}}), {empty, int64s({1})}, 1, {1}, 2)[0];
    EXPECT_TRUE(near_all(prod, Shape{2, 3}, std::vector<double>(6, 1.0), 0));
}

// Integers reduce exactly in 64 bits (values past 2^53 included), sums wrap
// like the element type, MEAN truncates toward zero; the reference is plain
// integer loops here.
TEST(NormsReduce, IntegersReduceExactly)
{
    const int64_t big = (int64_t(1) << 60) + 1;
    const std::vector<int64_t> v = {big, 3, -7, 5, -2, big, 9, -1, 4, 4, -4, 6};
    Tensor x({3, 4}, DType::I64);
    std::copy(v.begin(), v.end(), x.data<int64_t>());
    for (int op : {0, 2, 3, 4, 5, 6, 7}) {
        const Tensor y = run_op("Reduction", params({{0, op}, {4, 0}, {21, 1}}), {x, int64s({1})}, 1, {1}, 2)[0];
        ASSERT_EQ(y.dtype(), DType::I64);
        ASSERT_EQ(y.shape(), Shape{3});
        for (int r = 0; r < 3; ++r) {
            uint64_t sum = 0, product = 1, squares = 0, abs_sum = 0;
            int64_t lo = v[r * 4], hi = v[r * 4];
            for (int c = 0; c < 4; ++c) {
                const int64_t e = v[r * 4 + c];
                sum += static_cast<uint64_t>(e);
                product *= static_cast<uint64_t>(e);
                squares += static_cast<uint64_t>(e) * static_cast<uint64_t>(e);
                abs_sum += static_cast<uint64_t>(e < 0 ? -e : e);
                lo = std::min(lo, e);
                hi = std::max(hi, e);
            }
            const int64_t want = op == 0   ? static_cast<int64_t>(sum)
                                 : op == 2 ? static_cast<int64_t>(squares)
                                 : op == 3 ? static_cast<int64_t>(sum) / 4
                                 : op == 4 ? hi
                                 : op == 5 ? lo
                                 : op == 6 ? static_cast<int64_t>(product)
                                           : static_cast<int64_t>(abs_sum);
            EXPECT_EQ(y.data<int64_t>()[r], want) << "op " << op << " row " << r;
        }
    }
    Tensor bytes({2, 3}, DType::U8);
    const uint8_t b[] = {200, 100, 50, 1, 2, 3};
    std::copy(b, b + 6, bytes.data<uint8_t>());
    const Tensor wrapped = run_op("Reduction", params({{0, 0}, {4, 0}, {21, 1}}), {bytes, int64s({1})}, 1, {1})[0];
    EXPECT_EQ(wrapped.data<uint8_t>()[0], (200 + 100 + 50) % 256);
    EXPECT_EQ(wrapped.data<uint8_t>()[1], 6);
    Tensor ints({2, 2}, DType::I32);
    const int32_t iv[] = {-7, 2, 3, 4};
    std::copy(iv, iv + 4, ints.data<int32_t>());
    const Tensor mean = run_op("Reduction", params({{0, 3}, {4, 0}, {21, 1}}), {ints, int64s({1})}, 1, {1})[0];
    EXPECT_EQ(mean.data<int32_t>()[0], -2); // -2.5 truncated toward zero
    EXPECT_EQ(mean.data<int32_t>()[1], 3);
    const Tensor l2 = run_op("Reduction", params({{0, 8}, {4, 0}, {21, 1}}), {ints, int64s({1})}, 1, {1})[0];
    EXPECT_EQ(l2.data<int32_t>()[1], 5); // sqrt(9 + 16)
    EXPECT_EQ(l2.data<int32_t>()[0], 7); // sqrt(53) = 7.28, truncated
}

TEST(NormsReduce, EmptyAxesReduceAllOrPassThrough)
{
    const Tensor x = random_f32({3, 2, 2}, 21);
    Shape shape;
    const std::vector<double> all = reduce_reference(x, {}, 0, &shape, true);
    const Tensor none = int64s({});
    EXPECT_TRUE(near_all(run_op("Reduction", params({{0, 0}, {21, 1}}), {x, none})[0], shape, all, 1e-6));
    EXPECT_TRUE(near_all(run_op("Reduction", params({{0, 0}, {21, 1}}), {x})[0], shape, all, 1e-6));
    // keepdims=0 over every axis gives a scalar.
    EXPECT_TRUE(near_all(run_op("Reduction", params({{0, 0}, {4, 0}, {21, 1}}), {x})[0], Shape{}, all, 1e-6));
    // noop_with_empty_axes: the input unchanged (even for SumSquare).
    const std::vector<double> same = doubles_of(x);
    EXPECT_TRUE(near_all(run_op("Reduction", params({{0, 2}, {22, 1}, {21, 1}}), {x, none})[0], x.shape(), same, 0));
    EXPECT_TRUE(near_all(run_op("Reduction", params({{0, 2}, {22, 1}, {21, 1}}), {x})[0], x.shape(), same, 0));
}

TEST(NormsReduce, DoubleAndHalfKeepTheirDtype)
{
    const Tensor x = random_f32({2, 5}, 22);
    Shape shape;
    const std::vector<double> want = reduce_reference(x, {1}, 10, &shape, false);
    const Tensor y = run_op("Reduction", params({{0, 10}, {4, 0}, {21, 1}}), {x.to(DType::F64), int64s({1})}, 1, {1})[0];
    EXPECT_EQ(y.dtype(), DType::F64);
    EXPECT_TRUE(near_all(y, shape, want, 1e-6));
    const Tensor h = run_op("Reduction", params({{0, 10}, {4, 0}, {21, 1}}), {x.to(DType::F16), int64s({1})}, 1, {1})[0];
    EXPECT_EQ(h.dtype(), DType::F16);
    EXPECT_TRUE(near_all(h, shape, want, 1e-2));
}

TEST(NormsReduce, LogSumExpDoesNotOverflow)
{
    const Tensor x = floats({3}, {1000.f, 1000.f, -5.f});
    const Tensor y = run_op("Reduction", params({{0, 10}, {21, 1}}), {x})[0];
    EXPECT_NEAR(y.data<float>()[0], 1000.0 + std::log(2.0), 1e-3);
}

TEST(NormsReduce, RejectsBadAxesAndDtypes)
{
    const Tensor x = random_f32({2, 3}, 23);
    EXPECT_TRUE(has_text(error_of([&] { run_op("Reduction", params({{20, 1}, {21, 1}}), {x, int64s({2})}); }), "out of range"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("Reduction", params({{21, 1}}), {x, int64s({1})}); }), "20=dynamic=1"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("Reduction", params({{21, 1}}), {Tensor({2}, DType::Bool)}); }),
                         "float or integer tensor"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("Reduction", params({{0, 11}, {21, 1}}), {x}); }), "param 0"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("Reduction", params({{20, 1}, {21, 1}}), {x, floats({1}, {1})}); }),
                         "integer"));
}

// ---- Interp, ONNX's Resize form (20=1) ------------------------------------------

TEST(NormsResize, RunTimeScalesAndSizesMatchPlannedOnes)
{
    const Tensor x = random_f32({1, 2, 3, 4}, 30);
    const Tensor scales = floats({4}, {1, 1, 2.f, 0.5f});
    Tensor sizes = int64s({1, 2, 6, 2});
    for (int type : {1, 2, 3}) {
        const ParamDict planned = params({{20, 1}, {0, type}});
        const ParamDict dynamic = params({{20, 1}, {0, type}, {27, 1}});
        const Tensor want = run_op("Interp", planned, {x, scales}, 1, {1})[0];
        ASSERT_EQ(want.shape(), Shape({1, 2, 6, 2}));
        EXPECT_TRUE(near_all(run_op("Interp", dynamic, {x, scales})[0], want.shape(), doubles_of(want), 0));
        const ParamDict by_size = params({{20, 1}, {0, type}, {25, 1}, {27, 1}});
        EXPECT_TRUE(near_all(run_op("Interp", by_size, {x, sizes})[0], want.shape(), doubles_of(want), 1e-6));
    }
    // Without 27=dynamic a run-time target is refused.
    EXPECT_TRUE(has_text(error_of([&] { run_op("Interp", params({{20, 1}}), {x, scales}); }), "known while planning"));
}

TEST(NormsResize, AlignCornersWithScalesUsesTheUnroundedLength)
{
    // ONNX: x_in = x_out * (in - 1) / (in * scale - 1); [1 2 3 4] * 0.6 -> x_in = 0, 3 / 1.4.
    const Tensor x = floats({4}, {1, 2, 3, 4});
    const Tensor y = run_op("Interp", params({{20, 1}, {0, 2}, {21, 2}, {27, 1}}), {x, floats({1}, {0.6f})})[0];
    EXPECT_TRUE(near_all(y, Shape{2}, {1.0, 1.0 + 3.0 / 1.4}, 1e-6));
}

TEST(NormsResize, TfCropAndResizeBilinearWithExtrapolation)
{
    const Tensor x = random_f32({1, 1, 4, 5}, 31);
    const std::vector<float> roi = {0, 0, 0.2f, 0.1f, 1, 1, 1.3f, 0.8f};
    const int64_t oh = 3, ow = 4;
    const float extrapolation = 7.f;
    // Naive bilinear from the spec's formula: coordinate = start * (in - 1) + i * (end - start) * (in - 1) / (out - 1).
    std::vector<double> want;
    for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
            const double yi = roi[2] * 3 + i * (roi[6] - roi[2]) * 3 / (oh - 1);
            const double xj = roi[3] * 4 + j * (roi[7] - roi[3]) * 4 / (ow - 1);
            if (yi < 0 || yi > 3 || xj < 0 || xj > 4) {
                want.push_back(extrapolation);
                continue;
            }
            const int64_t y0 = static_cast<int64_t>(std::floor(yi)), x0 = static_cast<int64_t>(std::floor(xj));
            const int64_t y1 = std::min<int64_t>(y0 + 1, 3), x1 = std::min<int64_t>(x0 + 1, 4);
            const double fy = yi - y0, fx = xj - x0;
            auto at = [&](int64_t r, int64_t c) { return static_cast<double>(x.data<float>()[r * 5 + c]); };
            want.push_back((1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) +
                           fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1)));
        }
    ParamDict pd = params({{20, 1}, {0, 2}, {21, 5}, {25, 1}, {27, 1}});
    pd.set_float(26, extrapolation);
    const Tensor y = run_op("Interp", pd, {x, int64s({1, 1, oh, ow}), floats({8}, roi)})[0];
    EXPECT_TRUE(near_all(y, Shape({1, 1, oh, ow}), want, 1e-5));
    EXPECT_TRUE(has_text(error_of([&] { run_op("Interp", pd, {x, int64s({1, 1, oh, ow}), floats({4}, {0, 0, 1, 1})}); }),
                         "roi input must have shape (8)"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("Interp", pd, {x, int64s({1, 1, oh, ow})}); }), "3 input"));
}

TEST(NormsResize, RejectsBadTargets)
{
    const Tensor x = random_f32({2, 3}, 32);
    EXPECT_TRUE(has_text(error_of([&] { run_op("Interp", params({{20, 1}, {27, 1}}), {x, floats({3}, {1, 1, 1})}); }),
                         "must have shape (2)"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("Interp", params({{20, 1}, {27, 1}}), {x, floats({2}, {1, -1})}); }),
                         "scales must be > 0"));
    EXPECT_TRUE(has_text(error_of([&] { run_op("Interp", params({{20, 1}, {25, 1}, {27, 1}}), {x, int64s({2, 0})}); }),
                         "sizes must be >= 1"));
    const Tensor empty = random_f32({2, 0}, 33);
    EXPECT_TRUE(has_text(error_of([&] { run_op("Interp", params({{20, 1}, {25, 1}, {27, 1}}), {empty, int64s({2, 3})}); }),
                         "empty"));
}

// ---- Gemm -------------------------------------------------------------------

TEST(NormsGemm, ScalarCIsBroadcast)
{
    const Tensor a = random_f32({2, 3}, 40), b = random_f32({3, 4}, 41);
    Tensor c(Shape{}, DType::F32);
    c.data<float>()[0] = 3.25f;
    std::vector<double> want;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j) {
            double s = 0;
            for (int k = 0; k < 3; ++k) s += a.data<float>()[i * 3 + k] * b.data<float>()[k * 4 + j];
            want.push_back(0.5 * (s + 2 * 3.25)); // ncnn's alpha * (AB + beta C)
        }
    ParamDict pd;
    pd.set_float(0, 0.5f);
    pd.set_float(1, 2.f);
    EXPECT_TRUE(near_all(run_op("Gemm", pd, {a, b, c})[0], Shape({2, 4}), want, 1e-5));
}

#ifdef KESTREL_HAVE_ONNX
// ---- ONNX converters ----------------------------------------------------------

struct Model {
    onnx::ModelProto proto;
    onnx::NodeProto* node;
};

// One-node model; every input a graph input, every output float of the given rank.
Model one_node(int opset, const std::string& op, const std::vector<std::tuple<std::string, Shape, int>>& inputs,
               const std::vector<std::pair<std::string, int>>& outputs)
{
    Model m;
    m.proto.set_ir_version(8);
    m.proto.add_opset_import()->set_version(opset);
    onnx::GraphProto* g = m.proto.mutable_graph();
    g->set_name("g");
    m.node = g->add_node();
    m.node->set_op_type(op);
    for (const auto& [name, shape, type] : inputs) {
        m.node->add_input(name);
        if (name.empty()) continue;
        auto* t = g->add_input()->mutable_type()->mutable_tensor_type();
        g->mutable_input(g->input_size() - 1)->set_name(name);
        t->set_elem_type(type);
        for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
    }
    for (const auto& [name, rank] : outputs) {
        m.node->add_output(name);
        if (name.empty()) continue; // an omitted optional output
        auto* o = g->add_output();
        o->set_name(name);
        auto* t = o->mutable_type()->mutable_tensor_type();
        t->set_elem_type(onnx::TensorProto::FLOAT);
        t->mutable_shape();
        for (int k = 0; k < rank; ++k) t->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(k));
    }
    return m;
}

void attr(onnx::NodeProto* n, const std::string& name, float v)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
}
void attr(onnx::NodeProto* n, const std::string& name, int64_t v)
{
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
}

std::vector<Tensor> run_model(const Model& m, const std::vector<Tensor>& inputs)
{
    const std::string bytes = m.proto.SerializeAsString();
    Net net;
    load_onnx_mem(net, bytes.data(), bytes.size(), "test.onnx");
    Session s(net);
    for (size_t i = 0; i < inputs.size(); ++i) s.set_input(net.input_names()[i], inputs[i]);
    return s.run(net.output_names());
}

constexpr int kFloat = onnx::TensorProto::FLOAT;

TEST(NormsConverters, GemmAlphaBetaAreOnnxs)
{
    const Tensor a = random_f32({4, 3}, 50), b = random_f32({5, 4}, 51), c = random_f32({1, 5}, 52);
    Model m = one_node(13, "Gemm", {{"a", {4, 3}, kFloat}, {"b", {5, 4}, kFloat}, {"c", {1, 5}, kFloat}}, {{"y", 2}});
    attr(m.node, "alpha", 0.25f);
    attr(m.node, "beta", 0.35f);
    attr(m.node, "transA", int64_t{1});
    attr(m.node, "transB", int64_t{1});
    std::vector<double> want;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 5; ++j) {
            double s = 0;
            for (int k = 0; k < 4; ++k) s += a.data<float>()[k * 3 + i] * b.data<float>()[j * 4 + k];
            want.push_back(0.25 * s + 0.35 * c.data<float>()[j]);
        }
    EXPECT_TRUE(near_all(run_model(m, {a, b, c})[0], Shape({3, 5}), want, 1e-5));
}

TEST(NormsConverters, LayerNormalizationStatisticsOutputs)
{
    const Tensor x = random_f32({2, 3, 4}, 53), w = random_f32({3, 4}, 54);
    Model m = one_node(17, "LayerNormalization", {{"x", {2, 3, 4}, kFloat}, {"w", {3, 4}, kFloat}},
                       {{"y", 3}, {"", 0}, {"inv", 3}});
    attr(m.node, "axis", int64_t{-2});
    const NormReference want = normalize_reference(
        x, {1, 2}, 1e-5, false, [&](const auto& c) { return static_cast<double>(w.data<float>()[c[1] * 4 + c[2]]); },
        [](const auto&) { return 0.0; });
    const std::vector<Tensor> out = run_model(m, {x, w});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_TRUE(near_all(out[0], x.shape(), want.y, 1e-5));
    EXPECT_TRUE(near_all(out[1], Shape({2, 1, 1}), want.inv_std, 1e-5));
}

TEST(NormsConverters, BatchNormalizationWithRunTimeWeights)
{
    const Tensor x = random_f32({1, 2, 3}, 55), s = floats({2}, {2, 3}), b = floats({2}, {1, -1});
    const Tensor mean = floats({2}, {0.5f, -0.5f}), var = floats({2}, {4, 9});
    Model m = one_node(15, "BatchNormalization",
                       {{"x", {1, 2, 3}, kFloat}, {"s", {2}, kFloat}, {"b", {2}, kFloat}, {"m", {2}, kFloat},
                        {"v", {2}, kFloat}},
                       {{"y", 3}});
    attr(m.node, "epsilon", 0.f);
    std::vector<double> want;
    for (int64_t i = 0; i < 6; ++i) {
        const int c = static_cast<int>(i / 3);
        want.push_back((x.data<float>()[i] - mean.data<float>()[c]) / std::sqrt(var.data<float>()[c]) *
                           s.data<float>()[c] +
                       b.data<float>()[c]);
    }
    EXPECT_TRUE(near_all(run_model(m, {x, s, b, mean, var})[0], x.shape(), want, 1e-6));
}

TEST(NormsConverters, ReduceSumWithRunTimeAxes)
{
    const Tensor x = random_f32({3, 2, 2}, 56);
    Model m = one_node(13, "ReduceSum", {{"x", {3, 2, 2}, kFloat}, {"axes", {1}, onnx::TensorProto::INT64}}, {{"y", 2}});
    attr(m.node, "keepdims", int64_t{0});
    Shape shape;
    const std::vector<double> want = reduce_reference(x, {1}, 0, &shape, false);
    EXPECT_TRUE(near_all(run_model(m, {x, int64s({-2})})[0], shape, want, 1e-6));
}

// Detection exports reduce int64 shape values (torchvision's transform:
// ReduceMin over image sizes): the converter takes integer reductions.
TEST(NormsConverters, ReduceMinOfInt64)
{
    layer_test::OnnxGraph g(13);
    g.input("x", {2, 3}, onnx::TensorProto::INT64);
    layer_test::OnnxGraph::attr_ints(g.node("ReduceMin", {"x"}, {"y"}), "axes", {1});
    g.output("y", 2, onnx::TensorProto::INT64);
    const Net net = g.load(true);
    Session s(net);
    Tensor x({2, 3}, DType::I64);
    const int64_t v[] = {(int64_t(1) << 55) + 3, (int64_t(1) << 55) + 1, (int64_t(1) << 55) + 2, 9, -4, 7};
    std::copy(v, v + 6, x.data<int64_t>());
    s.set_input("x", x);
    const Tensor y = s.get("y");
    ASSERT_EQ(y.dtype(), DType::I64);
    ASSERT_EQ(y.shape(), (Shape{2, 1}));
    EXPECT_EQ(y.data<int64_t>()[0], v[1]);
    EXPECT_EQ(y.data<int64_t>()[1], -4);
}
// BatchNormalization with training_mode=1 on a rank-3 input (N, C, L): Y
// from the batch's own statistics over N and L, the running mean and
// (population) variance updated with momentum, against the formulas.
TEST(OnnxBatchNorm, TrainingModeOnRank3)
{
    const int64_t n = 2, c = 3, l = 5;
    layer_test::OnnxGraph g(15);
    g.input("x", {n, c, l});
    g.init("scale", layer_test::f32({c}, {1.5f, -0.5f, 2.f}));
    g.init("b", layer_test::f32({c}, {0.1f, 0.2f, -0.3f}));
    g.init("mean", layer_test::f32({c}, {0.5f, -1.f, 2.f}));
    g.init("var", layer_test::f32({c}, {1.f, 4.f, 0.25f}));
    onnx::NodeProto* bn = g.node("BatchNormalization", {"x", "scale", "b", "mean", "var"}, {"y", "rm", "rv"});
    layer_test::OnnxGraph::attr_int(bn, "training_mode", 1);
    layer_test::OnnxGraph::attr_float(bn, "momentum", 0.8f);
    layer_test::OnnxGraph::attr_float(bn, "epsilon", 1e-3f);
    g.output("y", 3);
    g.output("rm", 1);
    g.output("rv", 1);
    Tensor x({n, c, l});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::sin(0.7f * static_cast<float>(i)) * 3.f + 0.1f * static_cast<float>(i % 4);
    const Net net = g.load(true);
    Session s(net);
    s.set_input("x", x);
    const Tensor y = s.get("y"), rm = s.get("rm"), rv = s.get("rv");
    const float scale[] = {1.5f, -0.5f, 2.f}, b[] = {0.1f, 0.2f, -0.3f}, mean0[] = {0.5f, -1.f, 2.f}, var0[] = {1.f, 4.f, 0.25f};
    for (int64_t ch = 0; ch < c; ++ch) {
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t k = 0; k < l; ++k) sum += x.data<float>()[(i * c + ch) * l + k];
        const double mean = sum / (n * l);
        for (int64_t i = 0; i < n; ++i)
            for (int64_t k = 0; k < l; ++k) sq += std::pow(x.data<float>()[(i * c + ch) * l + k] - mean, 2);
        const double var = sq / (n * l);
        EXPECT_NEAR(rm.data<float>()[ch], mean0[ch] * 0.8 + mean * 0.2, 1e-5) << ch;
        EXPECT_NEAR(rv.data<float>()[ch], var0[ch] * 0.8 + var * 0.2, 1e-5) << ch;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t k = 0; k < l; ++k) {
                const int64_t at = (i * c + ch) * l + k;
                EXPECT_NEAR(y.data<float>()[at], (x.data<float>()[at] - mean) / std::sqrt(var + 1e-3) * scale[ch] + b[ch], 1e-4)
                    << at;
            }
    }
}
#endif

} // namespace
