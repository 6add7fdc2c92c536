// UnaryOp layer (ncnn format): every op type 0..27 against the <cmath> function
// named in ncnn's table, computed here in the test; ROUND is checked against
// nearbyintf under FE_TONEAREST and against hand-written half-to-even values.
#include <gtest/gtest.h>

#include <cfenv>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kestrel/kestrel.h"

// Defined in src/ops/unary_op.cpp (the registry maps the ncnn type name to it).
namespace kestrel {
std::unique_ptr<Op> make_unary_op();
}

using namespace kestrel;

namespace {

float ref_round_nearbyint(float x)
{
    const int old = std::fegetround();
    std::fesetround(FE_TONEAREST);
    const float r = nearbyintf(x);
    std::fesetround(old);
    return r;
}

float ref_unary(int t, float x)
{
    switch (t) {
    case 0: return fabsf(x);
    case 1: return -x;
    case 2: return floorf(x);
    case 3: return ceilf(x);
    case 4: return x * x;
    case 5: return sqrtf(x);
    case 6: return 1.f / sqrtf(x);
    case 7: return expf(x);
    case 8: return logf(x);
    case 9: return sinf(x);
    case 10: return cosf(x);
    case 11: return tanf(x);
    case 12: return asinf(x);
    case 13: return acosf(x);
    case 14: return atanf(x);
    case 15: return 1.f / x;
    case 16: return tanhf(x);
    case 17: return log10f(x);
    case 18: return ref_round_nearbyint(x);
    case 19: return truncf(x);
    case 20: return x > 0.f ? 1.f : (x < 0.f ? -1.f : 0.f);
    case 21: return expm1f(x);
    case 22: return sinhf(x);
    case 23: return asinhf(x);
    case 24: return coshf(x);
    case 25: return acoshf(x);
    case 26: return atanhf(x);
    case 27: return log1pf(x);
    }
    ADD_FAILURE() << "bad op " << t;
    return 0;
}

// Input range inside each function's domain.
void domain(int t, float& lo, float& hi)
{
    lo = -6.f, hi = 6.f;
    if (t == 5 || t == 6 || t == 8 || t == 17) lo = 0.01f;       // sqrt, rsqrt, log, log10
    if (t == 12 || t == 13 || t == 26) lo = -0.99f, hi = 0.99f;  // asin, acos, atanh
    if (t == 25) lo = 1.f;                                       // acosh
    if (t == 27) lo = -0.99f;                                    // log1p
}

bool same_float(float x, float y)
{
    if (std::isnan(x) && std::isnan(y)) return true;
    uint32_t p, q;
    std::memcpy(&p, &x, 4);
    std::memcpy(&q, &y, 4);
    return p == q;
}

std::unique_ptr<Op> make_layer(int op_type)
{
    auto op = make_unary_op();
    op->type = "UnaryOp";
    op->name = "un0";
    ParamDict pd;
    pd.set_int(0, op_type);
    op->load_param(pd);
    return op;
}

TensorDesc desc(const Shape& shape, DType dtype = DType::F32)
{
    TensorDesc d;
    d.shape = shape;
    d.dtype = dtype;
    return d;
}

Tensor run(const Op& op, const Tensor& in, int threads = 1)
{
    std::vector<TensorDesc> outs(1);
    op.infer({desc(in.shape(), in.dtype())}, outs);
    EXPECT_EQ(outs[0].shape, in.shape());
    std::vector<Tensor> out{Tensor(outs[0].shape, outs[0].dtype)};
    static ThreadPool pool(2);
    op.run({in}, out, ExecContext(&pool, threads));
    return out[0];
}

} // namespace

TEST(UnaryOp, EveryOpTypeMatchesCmath)
{
    std::mt19937 rng(9);
    const float specials[] = {0.f, -0.f, 0.5f, -0.5f, 1.5f, -2.5f, INFINITY, -INFINITY, NAN};
    for (int t = 0; t < 28; ++t) {
        SCOPED_TRACE("op " + std::to_string(t));
        float lo, hi;
        domain(t, lo, hi);
        std::uniform_real_distribution<float> dist(lo, hi);
        Tensor in({3, 7, 11}, DType::F32);
        float* p = in.data<float>();
        for (int64_t i = 0; i < in.numel(); ++i) p[i] = dist(rng);
        for (size_t i = 0; i < sizeof(specials) / sizeof(specials[0]); ++i) p[i * 17] = specials[i];
        auto op = make_layer(t);
        EXPECT_TRUE(op->supports_inplace());
        const Tensor out = run(*op, in);
        for (int64_t i = 0; i < in.numel(); ++i)
            ASSERT_TRUE(same_float(out.data<float>()[i], ref_unary(t, p[i])))
                << "x=" << p[i] << " got " << out.data<float>()[i] << " want " << ref_unary(t, p[i]);
    }
}

TEST(UnaryOp, RoundHalfToEven)
{
    const std::vector<std::pair<float, float>> cases = {
        {0.5f, 0.f},  {1.5f, 2.f},   {2.5f, 2.f},   {3.5f, 4.f},   {-0.5f, -0.f},     {-1.5f, -2.f},
        {-2.5f, -2.f}, {2.4999998f, 2.f}, {2.5000002f, 3.f}, {-3.7f, -4.f}, {8388607.5f, 8388608.f},
        {8388609.f, 8388609.f}, {1e30f, 1e30f}, {0.49999997f, 0.f}, {-0.f, -0.f},
    };
    Tensor in({static_cast<int64_t>(cases.size())}, DType::F32);
    for (size_t i = 0; i < cases.size(); ++i) in.data<float>()[i] = cases[i].first;
    const Tensor out = run(*make_layer(18), in);
    for (size_t i = 0; i < cases.size(); ++i) {
        EXPECT_TRUE(same_float(out.data<float>()[i], cases[i].second))
            << cases[i].first << " -> " << out.data<float>()[i];
        EXPECT_TRUE(same_float(out.data<float>()[i], ref_round_nearbyint(cases[i].first)));
    }
    // independent of the caller's rounding mode
    const int old = std::fegetround();
    std::fesetround(FE_UPWARD);
    const Tensor up = run(*make_layer(18), in);
    std::fesetround(old);
    for (size_t i = 0; i < cases.size(); ++i) EXPECT_TRUE(same_float(up.data<float>()[i], cases[i].second));
    // every k + 0.5 in a range
    Tensor halves({400}, DType::F32);
    for (int i = 0; i < 400; ++i) halves.data<float>()[i] = static_cast<float>(i - 200) + 0.5f;
    const Tensor rh = run(*make_layer(18), halves);
    for (int i = 0; i < 400; ++i) {
        const float x = halves.data<float>()[i];
        const float fl = std::floor(x);
        const float want = (std::fmod(fl, 2.f) == 0.f) ? fl : fl + 1.f;
        ASSERT_EQ(rh.data<float>()[i], want) << x;
    }
}

TEST(UnaryOp, InPlaceAndThreads)
{
    std::mt19937 rng(10);
    Tensor t({8, 64, 100}, DType::F32);
    std::uniform_real_distribution<float> dist(-3.f, 3.f);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    const Tensor orig = t.clone();
    auto op = make_layer(16); // tanh
    std::vector<Tensor> outs{t};
    static ThreadPool pool(3);
    op->run({t}, outs, ExecContext(&pool, 4));
    for (int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.data<float>()[i], tanhf(orig.data<float>()[i])) << i;
}

TEST(UnaryOp, Errors)
{
    for (int bad : {-1, 28, 1000}) {
        std::string m;
        try {
            make_layer(bad);
        } catch (const Error& e) {
            m = e.what();
        }
        EXPECT_NE(m.find("op_type"), std::string::npos) << m;
        EXPECT_NE(m.find(std::to_string(bad)), std::string::npos) << m;
    }
    auto op = make_layer(0);
    std::vector<TensorDesc> outs(1);
    EXPECT_THROW(op->infer({desc({4}, DType::I32)}, outs), Error);
    EXPECT_THROW(op->infer({desc({4}), desc({4})}, outs), Error);
    // empty tensors are fine
    Tensor empty({0, 3}, DType::F32);
    EXPECT_EQ(run(*op, empty).numel(), 0);
}

TEST(UnaryOp, InANet)
{
    Net net;
    EXPECT_THROW(net.load_param_mem("7767517\n2 2\nInput a 0 1 a\nUnaryOp u 1 1 a b 0=28\n"), Error);
    Net ok;
    ok.load_param_mem("7767517\n3 3\nInput a 0 1 a\nUnaryOp sq 1 1 a b 0=4\nUnaryOp neg 1 1 b c 0=1\n");
    Session s(ok);
    Tensor a({3, 5}, DType::F32);
    for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = static_cast<float>(i) - 7.f;
    s.set_input("a", a);
    const Tensor c = s.get("c");
    for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(c.data<float>()[i], -(a.data<float>()[i] * a.data<float>()[i]));
}
