// Standalone activation layers (ncnn format): ReLU, Clip, Sigmoid, Swish,
// HardSigmoid, HardSwish, GELU, Mish, TanH, Dropout. Each is checked against
// ncnn's formula written here (in double where the formula allows), with the
// defaults and every param, on every rank, in place and multi-threaded, and
// through a .param text as the zoo models write them.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kestrel/kestrel.h"
#include "layer_test_util.h"
#include "kestrel/op.h"
#include "kestrel/param_dict.h"
#include "kestrel/tensor.h"

using namespace kestrel;

namespace {

using kestrel::layer_test::error_of;

ThreadPool& act_pool()
{
    static ThreadPool p(3);
    return p;
}

std::unique_ptr<Op> make_act(const std::string& type, const ParamDict& pd = {})
{
    auto op = create_op(type);
    if (!op) fail("type ", type, " is not registered");
    op->type = type;
    op->name = "a0";
    op->load_param(pd);
    return op;
}

ParamDict floats(std::initializer_list<std::pair<int, float>> kv)
{
    ParamDict pd;
    for (const auto& [k, v] : kv) pd.set_float(k, v);
    return pd;
}

Tensor act_run(const Op& op, const Tensor& x, int threads = 1, bool inplace = false)
{
    TensorDesc d;
    d.shape = x.shape();
    std::vector<TensorDesc> outs(1);
    op.infer({d}, outs);
    EXPECT_EQ(outs[0].shape, x.shape());
    EXPECT_EQ(outs[0].dtype, DType::F32);
    Tensor in = x.clone();
    std::vector<Tensor> out{inplace ? in : Tensor(outs[0].shape, outs[0].dtype)};
    op.run({in}, out, ExecContext(&act_pool(), threads));
    return out[0];
}

// Inputs covering the interesting ranges: around 0, the piecewise breakpoints,
// large magnitudes, infinities.
std::vector<float> probe_values()
{
    std::vector<float> v = {0.f,   -0.f,  1e-6f, -1e-6f, 0.5f,  -0.5f, 1.f,    -1.f,   2.5f,   -2.5f,  3.f,   -3.f,
                            5.f,   -5.f,  10.f,  -10.f,  19.9f, 20.1f, -19.9f, -20.1f, 50.f,   -50.f,  88.f,  -88.f,
                            88.5f, -88.5f, 90.f, -90.f,  100.f, -100.f, 1e4f,  -1e4f,  1e30f,  -1e30f, INFINITY, -INFINITY};
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> d(-8.f, 8.f);
    for (int i = 0; i < 200; ++i) v.push_back(d(rng));
    return v;
}

Tensor tensor_of(const Shape& s, const std::vector<float>& v)
{
    Tensor t(s, DType::F32);
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
}

// |got - ref| <= atol + rtol |ref|, exact for infinities; NaN must match NaN.
void check_values(const Tensor& got, const std::vector<float>& x, const std::function<double(double)>& ref, double atol,
                  double rtol, const std::string& what)
{
    ASSERT_EQ(static_cast<size_t>(got.numel()), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
        const double r = ref(x[i]);
        const double g = got.data<float>()[i];
        if (std::isnan(r)) {
            EXPECT_TRUE(std::isnan(g)) << what << " x=" << x[i];
        } else if (std::isinf(r) || std::fabs(r) > FLT_MAX) {
            EXPECT_EQ(g, static_cast<double>(static_cast<float>(r))) << what << " x=" << x[i];
        } else {
            EXPECT_LE(std::fabs(g - r), atol + rtol * std::fabs(r)) << what << " x=" << x[i] << " got " << g << " ref " << r;
        }
    }
}

// Runs op on the probe values in several shapes, threads and in place; all runs
// must agree bit for bit and match ref.
void check_activation(const std::string& type, const ParamDict& pd, const std::function<double(double)>& ref,
                      double atol = 1e-6, double rtol = 1e-5)
{
    SCOPED_TRACE(type + " " + pd.to_text());
    auto op = make_act(type, pd);
    EXPECT_TRUE(op->supports_inplace());
    const auto x = probe_values();
    const int64_t n = static_cast<int64_t>(x.size()); // 236 = 2*2*59
    const Tensor base = act_run(*op, tensor_of({n}, x));
    check_values(base, x, ref, atol, rtol, type);
    for (const Shape& s : std::vector<Shape>{{2, n / 2}, {2, 2, n / 4}, {2, 2, 1, n / 4}}) {
        const Tensor t = tensor_of(s, x);
        for (int threads : {1, 3})
            for (bool inplace : {false, true}) {
                const Tensor y = act_run(*op, t, threads, inplace);
                EXPECT_EQ(y.shape(), s);
                EXPECT_EQ(std::memcmp(y.raw(), base.raw(), base.nbytes()), 0) << shape_str(s) << " threads " << threads;
            }
    }
}

// ncnn's formulas (src/layer/*.cpp), in double.
double sigmoid_ncnn(double x)
{
    const double c = std::min(std::max(x, -88.3762626647949), 88.3762626647949);
    return 1.0 / (1.0 + std::exp(-c));
}
double hard_sigmoid(double x, double a, double b)
{
    const double lower = -b / a, upper = 1.0 / a + lower;
    if (x < lower) return 0.0;
    if (x > upper) return 1.0;
    return x * a + b;
}
double hard_swish(double x, double a, double b)
{
    const double lower = -b / a, upper = 1.0 / a + lower;
    if (x < lower) return 0.0;
    if (x > upper) return x;
    return x * (x * a + b);
}
double mish(double x)
{
    const double sp = x > 20 ? x : (x < -20 ? std::exp(x) : std::log(std::exp(x) + 1));
    return x * std::tanh(sp);
}

} // namespace

TEST(Activation, ReLUDefaultAndLeakySlope)
{
    check_activation("ReLU", {}, [](double x) { return x < 0 ? 0.0 : x; }, 0, 0);
    check_activation("ReLU", floats({{0, 0.1f}}), [](double x) { return x < 0 ? x * double(0.1f) : x; }, 1e-30, 1e-6);
    check_activation("ReLU", floats({{0, -2.f}}), [](double x) { return x < 0 ? x * -2.0 : x; }, 0, 1e-7);
}

TEST(Activation, ClipDefaultsAndBounds)
{
    // Defaults -FLT_MAX..FLT_MAX: identity except infinities, clamped to +-FLT_MAX as ncnn.
    check_activation("Clip", {}, [](double x) { return std::min(std::max(x, double(-FLT_MAX)), double(FLT_MAX)); }, 0, 0);
    check_activation("Clip", floats({{0, -1.f}, {1, 2.5f}}), [](double x) { return std::min(std::max(x, -1.0), 2.5); }, 0, 0);
    check_activation("Clip", floats({{0, 0.f}, {1, 6.f}}), [](double x) { return std::min(std::max(x, 0.0), 6.0); }, 0, 0);
    EXPECT_NE(error_of([] { make_act("Clip", floats({{0, 2.f}, {1, 1.f}})); }).find("min"), std::string::npos);
}

TEST(Activation, SigmoidClampsLikeNcnn)
{
    check_activation("Sigmoid", {}, sigmoid_ncnn, 1e-7, 1e-5);
    // Far below -88.38 ncnn's clamp gives the tiny value 1/(1+e^88.376), not 0.
    auto op = make_act("Sigmoid");
    const Tensor y = act_run(*op, tensor_of({2}, {-100.f, -1e30f}));
    EXPECT_GT(y.data<float>()[0], 0.f);
    EXPECT_EQ(y.data<float>()[0], y.data<float>()[1]);
}

TEST(Activation, Swish)
{
    check_activation("Swish", {}, [](double x) { return x / (1.0 + std::exp(-x)); }, 1e-7, 1e-5);
}

TEST(Activation, HardSigmoidDefaultsAndPyTorchForm)
{
    check_activation("HardSigmoid", {}, [](double x) { return hard_sigmoid(x, 0.2, 0.5); }, 1e-6, 1e-6);
    const float sixth = 1.f / 6.f;
    check_activation("HardSigmoid", floats({{0, sixth}, {1, 0.5f}}),
                     [&](double x) { return hard_sigmoid(x, double(sixth), 0.5); }, 1e-6, 1e-6);
    check_activation("HardSigmoid", floats({{0, 0.5f}, {1, 0.25f}}), [](double x) { return hard_sigmoid(x, 0.5, 0.25); },
                     1e-6, 1e-6);
}

TEST(Activation, HardSwishDefaultsAndPyTorchForm)
{
    check_activation("HardSwish", {}, [](double x) { return hard_swish(x, 0.2, 0.5); }, 1e-6, 1e-6);
    const float sixth = 1.f / 6.f;
    check_activation("HardSwish", floats({{0, sixth}, {1, 0.5f}}), [&](double x) { return hard_swish(x, double(sixth), 0.5); },
                     1e-6, 1e-6);
    EXPECT_NE(error_of([] { make_act("HardSwish", floats({{0, 0.f}})); }).find("alpha"), std::string::npos);
}

TEST(Activation, GeluExactAndFast)
{
    check_activation("GELU", {}, [](double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }, 1e-6, 1e-5);
    ParamDict fast;
    fast.set_int(0, 1);
    check_activation("GELU", fast,
                     [](double x) { return 0.5 * x * (1 + std::tanh(0.79788452 * (x + 0.044715 * x * x * x))); }, 1e-6,
                     1e-5);
    // The two forms differ (tanh approximation).
    auto exact = make_act("GELU"), approx = make_act("GELU", fast);
    const Tensor x = tensor_of({1}, {-1.5f});
    EXPECT_NE(act_run(*exact, x).data<float>()[0], act_run(*approx, x).data<float>()[0]);
}

TEST(Activation, Mish)
{
    check_activation("Mish", {}, mish, 1e-6, 1e-5);
}

TEST(Activation, TanH)
{
    check_activation("TanH", {}, [](double x) { return std::tanh(x); }, 1e-7, 1e-6);
}

TEST(Activation, DropoutScale)
{
    check_activation("Dropout", {}, [](double x) { return x; }, 0, 0);
    check_activation("Dropout", floats({{0, 0.5f}}), [](double x) { return x * 0.5; }, 0, 0);
    check_activation("Dropout", floats({{0, 0.8f}}), [](double x) { return x * double(0.8f); }, 1e-30, 1e-7);
}

TEST(Activation, NanPropagates)
{
    for (const char* t : {"ReLU", "Sigmoid", "Swish", "GELU", "Mish", "TanH", "Dropout", "Clip"}) {
        auto op = make_act(t);
        const Tensor y = act_run(*op, tensor_of({1}, {std::numeric_limits<float>::quiet_NaN()}));
        EXPECT_TRUE(std::isnan(y.data<float>()[0])) << t;
    }
}

TEST(Activation, Errors)
{
    for (const char* t : {"ReLU", "Clip", "Sigmoid", "Swish", "HardSigmoid", "HardSwish", "GELU", "Mish", "TanH", "Dropout"}) {
        auto op = make_act(t);
        TensorDesc a, b;
        a.shape = {3};
        b.shape = {3};
        std::vector<TensorDesc> outs(1);
        EXPECT_NE(error_of([&] { op->infer({a, b}, outs); }).find("input"), std::string::npos) << t;
        a.dtype = DType::I8;
        EXPECT_NE(error_of([&] { op->infer({a}, outs); }).find("float32"), std::string::npos) << t;
        ParamDict bad;
        bad.set_string(0, "x");
        const std::string name = t;
        const bool has_params = name == "ReLU" || name == "Clip" || name == "HardSigmoid" || name == "HardSwish" ||
                                name == "GELU" || name == "Dropout";
        if (has_params) {
            EXPECT_NE(error_of([&] { make_act(t, bad); }), "no error") << t;
        }
    }
}

TEST(Activation, ZooFormsThroughParamText)
{
    // As written by the zoo models and by pnnx (HardSwish 0=1/6).
    Net net;
    net.load_param_mem("7767517\n6 6\nInput in 0 1 x\n"
                       "HardSwish hs 1 1 x a\n"
                       "HardSigmoid hsig 1 1 a b 0=1.666667e-01 1=5.000000e-01\n"
                       "GELU gelu 1 1 b c 0=1\n"
                       "ReLU leaky 1 1 c d 0=1.000000e-01\n"
                       "Clip clip 1 1 d e 0=-2.000000e-01 1=3.000000e-01\n");
    Session s(net);
    const std::vector<float> x = {-4.f, -2.6f, -1.f, -0.2f, 0.f, 0.3f, 1.1f, 2.4f, 2.6f, 5.f};
    s.set_input("x", tensor_of({2, 5}, x));
    const Tensor e = s.get("e");
    ASSERT_EQ(e.shape(), (Shape{2, 5}));
    for (size_t i = 0; i < x.size(); ++i) {
        double v = hard_swish(x[i], 0.2, 0.5);
        v = hard_sigmoid(v, double(1.666667e-01f), 0.5);
        v = 0.5 * v * (1 + std::tanh(0.79788452 * (v + 0.044715 * v * v * v)));
        v = v < 0 ? v * double(0.1f) : v;
        v = std::min(std::max(v, double(-0.2f)), double(0.3f));
        EXPECT_NEAR(e.data<float>()[i], v, 1e-6) << i;
    }
}
