// BinaryOp layer (ncnn format) through the Op interface: every op type over
// every row of ncnn's broadcast tables in both operand orders, with_scalar,
// in place, our broadcast_rule extension (param 20) and the error cases.
// Expected values: ncnn's rule written out per axis in ncnn [w,h,d,c] notation
// and a plain switch of <cmath> expressions, both here in the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kestrel/kestrel.h"
#include "binary_op_cases.h"
#include "layer_test_util.h"

// Defined in src/ops/binary_op.cpp (the registry maps the ncnn type name to it).
namespace kestrel {
std::unique_ptr<Op> make_binary_op();
}

using namespace kestrel;

namespace {

using kestrel::layer_test::error_of;
using namespace kestrel::binary_op_cases;

// ---- reference: ncnn broadcasting in ncnn notation (spec §1.8) -------------

NMat lift(const NMat& X, const NMat& Y, int outdims)
{
    if (X.dims == outdims) return X;
    if (outdims == 2) return X.w == Y.h ? nmat(2, 1, X.w, 1, 1) : nmat(2, X.w, 1, 1, 1);
    if (outdims == 3 && X.dims == 1) return X.w == Y.c ? nmat(3, 1, 1, 1, X.w) : nmat(3, X.w, 1, 1, 1);
    if (outdims == 3 && X.dims == 2) return nmat(3, 1, X.w, 1, X.h);
    if (outdims == 4 && X.dims == 1) return X.w == Y.c ? nmat(4, 1, 1, 1, X.w) : nmat(4, X.w, 1, 1, 1);
    if (outdims == 4 && X.dims == 2) return nmat(4, 1, 1, X.w, X.h);
    return nmat(4, 1, X.w, X.h, X.c);
}

float ref_op(int t, float x, float y)
{
    switch (t) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return x / y;
    case 4: return std::max(x, y);
    case 5: return std::min(x, y);
    case 6: return powf(x, y);
    case 7: return y - x;
    case 8: return y / x;
    case 9: return powf(y, x);
    case 10: return atan2f(x, y);
    case 11: return atan2f(y, x);
    case 12: return fmodf(x, y);
    case 13: return fmodf(y, x);
    case 14: return std::max(x, y) + log1pf(expf(std::min(x, y) - std::max(x, y)));
    case 15: return floorf(x / y);
    case 16: return floorf(y / x);
    case 17: return remainderf(x, y);
    case 18: return remainderf(y, x);
    }
    ADD_FAILURE() << "bad op " << t;
    return 0;
}

// C = A op B under ncnn's rules; A and B given in ncnn notation.
std::vector<float> ref_binary(int t, const NMat& A, const std::vector<float>& a, const NMat& B,
                              const std::vector<float>& b, NMat& C)
{
    const int outdims = std::max(A.dims, B.dims);
    const NMat A2 = lift(A, B, outdims), B2 = lift(B, A, outdims);
    C = nmat(outdims, std::max(A2.w, B2.w), std::max(A2.h, B2.h), std::max(A2.d, B2.d), std::max(A2.c, B2.c));
    std::vector<float> r;
    for (int64_t q = 0; q < C.c; ++q)
        for (int64_t z = 0; z < C.d; ++z)
            for (int64_t y = 0; y < C.h; ++y)
                for (int64_t x = 0; x < C.w; ++x) {
                    const int64_t ia = ((std::min(q, A2.c - 1) * A2.d + std::min(z, A2.d - 1)) * A2.h +
                                        std::min(y, A2.h - 1)) * A2.w + std::min(x, A2.w - 1);
                    const int64_t ib = ((std::min(q, B2.c - 1) * B2.d + std::min(z, B2.d - 1)) * B2.h +
                                        std::min(y, B2.h - 1)) * B2.w + std::min(x, B2.w - 1);
                    r.push_back(ref_op(t, a[static_cast<size_t>(ia)], b[static_cast<size_t>(ib)]));
                }
    return r;
}

bool same_float(float x, float y)
{
    if (std::isnan(x) && std::isnan(y)) return true;
    uint32_t p, q;
    std::memcpy(&p, &x, 4);
    std::memcpy(&q, &y, 4);
    return p == q;
}

// ---- helpers to drive the layer --------------------------------------------

std::unique_ptr<Op> make_layer(int op_type, int with_scalar = 0, float b = 0.f, int rule = -1)
{
    auto op = make_binary_op();
    op->type = "BinaryOp";
    op->name = "bin0";
    ParamDict pd;
    pd.set_int(0, op_type);
    if (with_scalar) pd.set_int(1, with_scalar);
    pd.set_float(2, b);
    if (rule >= 0) pd.set_int(20, rule);
    op->load_param(pd);
    return op;
}

Tensor tensor_of(const Shape& s, const std::vector<float>& v)
{
    Tensor t(s, DType::F32);
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
}

std::vector<float> values_of(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

std::vector<float> random_values(std::mt19937& rng, int64_t n, float lo, float hi)
{
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = dist(rng);
    return v;
}

TensorDesc desc(const Shape& shape, DType dtype = DType::F32)
{
    TensorDesc d;
    d.shape = shape;
    d.dtype = dtype;
    return d;
}

// Runs the layer: infer then forward; returns the output.
Tensor run(const Op& op, const std::vector<Tensor>& in, int threads = 1)
{
    std::vector<TensorDesc> descs;
    for (const auto& t : in) descs.push_back(desc(t.shape(), t.dtype()));
    std::vector<TensorDesc> outs(1);
    op.infer(descs, outs);
    std::vector<Tensor> out{Tensor(outs[0].shape, outs[0].dtype)};
    static ThreadPool pool(2);
    op.run(in, out, ExecContext(&pool, threads));
    return out[0];
}


} // namespace

TEST(BinaryOp, EveryOpEveryNcnnTableRowBothOrders)
{
    std::mt19937 rng(3);
    for (int t = 0; t < 19; ++t) {
        for (const Row& row : kRows) {
            for (int order = 0; order < 2; ++order) {
                const NMat A = nmat_of(order == 0 ? row.a : row.b);
                const NMat B = nmat_of(order == 0 ? row.b : row.a);
                const Shape sa = shape_of(A), sb = shape_of(B);
                SCOPED_TRACE("op " + std::to_string(t) + " A " + shape_str(sa) + " B " + shape_str(sb));
                // positive operands (pow/div well defined), then mixed signs
                for (int range = 0; range < 2; ++range) {
                    const float lo = range == 0 ? 0.25f : -3.f;
                    const auto a = random_values(rng, shape_numel(sa), lo, 3.f);
                    const auto b = random_values(rng, shape_numel(sb), lo, 3.f);
                    auto op = make_layer(t);
                    const Tensor out = run(*op, {tensor_of(sa, a), tensor_of(sb, b)});
                    NMat C;
                    const auto ref = ref_binary(t, A, a, B, b, C);
                    ASSERT_EQ(out.shape(), shape_of(C));
                    const auto got = values_of(out);
                    for (size_t i = 0; i < ref.size(); ++i)
                        ASSERT_TRUE(same_float(got[i], ref[i])) << "at " << i << ": " << got[i] << " vs " << ref[i];
                }
            }
        }
    }
}

TEST(BinaryOp, LargeMultithreaded)
{
    std::mt19937 rng(4);
    const std::vector<Row> rows = {{{96, 64, 8}, {8}}, {{96, 64, 8}, {96, 64, 1}}, {{200, 100}, {200, 100}},
                                   {{30000}, {1}}, {{33, 40, 5, 7}, {5, 7}}};
    for (int t : {0, 1, 2, 3, 4, 5, 7, 8, 10, 14}) {
        for (const Row& row : rows) {
            for (int order = 0; order < 2; ++order) {
                const NMat A = nmat_of(order == 0 ? row.a : row.b);
                const NMat B = nmat_of(order == 0 ? row.b : row.a);
                const auto a = random_values(rng, shape_numel(shape_of(A)), -2.f, 2.f);
                const auto b = random_values(rng, shape_numel(shape_of(B)), 0.5f, 2.f);
                auto op = make_layer(t);
                const Tensor out = run(*op, {tensor_of(shape_of(A), a), tensor_of(shape_of(B), b)}, 3);
                NMat C;
                const auto ref = ref_binary(t, A, a, B, b, C);
                const auto got = values_of(out);
                ASSERT_EQ(got.size(), ref.size());
                for (size_t i = 0; i < ref.size(); ++i)
                    ASSERT_TRUE(same_float(got[i], ref[i])) << "op " << t << " at " << i;
            }
        }
    }
}

TEST(BinaryOp, WithScalarEveryOpAndInPlace)
{
    std::mt19937 rng(5);
    const Shape s = {3, 5, 37};
    for (int t = 0; t < 19; ++t) {
        SCOPED_TRACE("op " + std::to_string(t));
        const float b = 1.75f;
        auto op = make_layer(t, 1, b);
        EXPECT_TRUE(op->supports_inplace());
        const auto a = random_values(rng, shape_numel(s), 0.25f, 3.f);
        const Tensor out = run(*op, {tensor_of(s, a)});
        ASSERT_EQ(out.shape(), s);
        const auto got = values_of(out);
        for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same_float(got[i], ref_op(t, a[i], b))) << i;

        // in place: the output is the input's storage
        Tensor io = tensor_of(s, a);
        std::vector<Tensor> outs{io};
        static ThreadPool pool(1);
        op->run({io}, outs, ExecContext(&pool, 2));
        const auto got2 = values_of(io);
        for (size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same_float(got2[i], ref_op(t, a[i], b))) << i;
    }
}

TEST(BinaryOp, BroadcastRuleParam)
{
    // ncnn [w=4,h=3] next to [4,3,2]: ncnn aligns it outer -> (3,4,1) vs (2,3,4): mismatch;
    // numpy aligns right -> fine.
    const Shape sa = {2, 3, 4}, sb = {3, 4};
    std::vector<float> a(24), b(12);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 100;
    EXPECT_THROW(run(*make_layer(0), {tensor_of(sa, a), tensor_of(sb, b)}), Error);
    const Tensor out = run(*make_layer(1, 0, 0.f, 1), {tensor_of(sa, a), tensor_of(sb, b)});
    ASSERT_EQ(out.shape(), sa);
    const auto got = values_of(out);
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(got[i], a[i] - b[i % 12]);

    // numpy, any rank (6-D), both operands stretched
    const Shape s5a = {2, 1, 3, 1, 2, 1}, s5b = {4, 1, 5};
    std::vector<float> x(12), y(20);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i) / 8;
    const Tensor o6 = run(*make_layer(2, 0, 0.f, 1), {tensor_of(s5a, x), tensor_of(s5b, y)});
    ASSERT_EQ(o6.shape(), (Shape{2, 1, 3, 4, 2, 5}));
    const auto g6 = values_of(o6);
    size_t e = 0;
    for (int i0 = 0; i0 < 2; ++i0)
        for (int i2 = 0; i2 < 3; ++i2)
            for (int i3 = 0; i3 < 4; ++i3)
                for (int i4 = 0; i4 < 2; ++i4)
                    for (int i5 = 0; i5 < 5; ++i5) {
                        const float xv = x[static_cast<size_t>((i0 * 3 + i2) * 2 + i4)];
                        const float yv = y[static_cast<size_t>(i3 * 5 + i5)];
                        ASSERT_EQ(g6[e++], xv * yv);
                    }

    // unidirectional: B to A's shape only
    const Tensor ou = run(*make_layer(0, 0, 0.f, 2), {tensor_of(sa, a), tensor_of({4}, {1, 2, 3, 4})});
    EXPECT_EQ(ou.shape(), sa);
    EXPECT_EQ(values_of(ou)[5], a[5] + 2);
    EXPECT_THROW(run(*make_layer(0, 0, 0.f, 2), {tensor_of({4}, {1, 2, 3, 4}), tensor_of(sa, a)}), Error);
}

TEST(BinaryOp, Errors)
{
    // op_type out of range, at load_param (the runtime adds the layer name, see below)
    for (int bad : {-1, 19, 100}) {
        const std::string m = error_of([&] { make_layer(bad); });
        EXPECT_NE(m.find("op_type"), std::string::npos) << m;
        EXPECT_NE(m.find(std::to_string(bad)), std::string::npos) << m;
    }
    EXPECT_NE(error_of([] { make_layer(0, 0, 0.f, 3); }).find("broadcast_rule"), std::string::npos);

    // incompatible shapes: both shapes named
    auto op = make_layer(0);
    std::vector<TensorDesc> outs(1);
    std::string m = error_of([&] { op->infer({desc({4, 3, 2}), desc({5, 3, 2})}, outs); });
    EXPECT_NE(m.find("(4,3,2)"), std::string::npos) << m;
    EXPECT_NE(m.find("(5,3,2)"), std::string::npos) << m;
    m = error_of([&] { op->infer({desc({4, 3, 2}), desc({3})}, outs); });
    EXPECT_NE(m.find("(3,)"), std::string::npos) << m;
    // rank 5 is not an ncnn blob
    EXPECT_THROW(op->infer({desc({1, 2, 3, 4, 5}), desc({1})}, outs), Error);
    // input count and dtype
    EXPECT_THROW(op->infer({desc({4})}, outs), Error);
    EXPECT_THROW(op->infer({desc({4}, DType::I32), desc({4})}, outs), Error);
}

// Through a Net: errors name the layer (the runtime's prefix), results match.
TEST(BinaryOp, InANetErrorsNameTheLayer)
{
    {
        Net net;
        const std::string m = error_of([&] {
            net.load_param_mem("7767517\n3 3\nInput a 0 1 a\nInput b 0 1 b\nBinaryOp badop 2 1 a b c 0=19\n");
        });
        EXPECT_NE(m.find("BinaryOp 'badop'"), std::string::npos) << m;
        EXPECT_NE(m.find("19"), std::string::npos) << m;
    }
    Net net;
    net.load_param_mem("7767517\n3 3\nInput a 0 1 a\nInput b 0 1 b\nBinaryOp sub1 2 1 a b c 0=1\n");
    Session s(net);
    s.set_input("a", tensor_of({2, 3, 4}, std::vector<float>(24, 1.f)));
    s.set_input("b", tensor_of({5, 3, 4}, std::vector<float>(60, 1.f)));
    const std::string m = error_of([&] { s.get("c"); });
    EXPECT_NE(m.find("BinaryOp 'sub1'"), std::string::npos) << m;
    EXPECT_NE(m.find("(2,3,4)"), std::string::npos) << m;
    EXPECT_NE(m.find("(5,3,4)"), std::string::npos) << m;

    // per-channel broadcast through the session: ncnn [w=4,h=3,c=2] - [2]
    std::vector<float> av(24), bv = {10.f, 20.f};
    for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i);
    s.set_input("a", tensor_of({2, 3, 4}, av));
    s.set_input("b", tensor_of({2}, bv));
    const Tensor c = s.get("c");
    ASSERT_EQ(c.shape(), (Shape{2, 3, 4}));
    for (size_t i = 0; i < av.size(); ++i) EXPECT_EQ(c.data<float>()[i], av[i] - bv[i / 12]);
}

// with_scalar in a chain where the runtime may run it in place.
TEST(BinaryOp, InANetWithScalarChain)
{
    Net net;
    net.load_param_mem("7767517\n3 3\nInput a 0 1 a\nBinaryOp m 1 1 a b 0=2 1=1 2=3.0\n"
                       "BinaryOp r 1 1 b c 0=7 1=1 2=1.0\n");
    Session s(net);
    std::vector<float> av(1000);
    for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i) * 0.25f;
    s.set_input("a", tensor_of({10, 100}, av));
    const Tensor c = s.get("c");
    for (size_t i = 0; i < av.size(); ++i) ASSERT_EQ(c.data<float>()[i], 1.f - av[i] * 3.f);
}

// In a net the runtime may write the sum over input A (residual-add style) when
// A dies there; B broadcast or full, A computed by an earlier layer.
TEST(BinaryOp, InANetInPlaceOverInputA)
{
    for (const char* bshape : {"full", "bcast"}) {
        Net net;
        net.load_param_mem("7767517\n5 5\nInput a 0 1 a\nInput b 0 1 b\nUnaryOp n 1 1 a x 0=1\n"
                           "BinaryOp add 2 1 x b y 0=1\nUnaryOp sq 1 1 y z 0=4\n");
        Session s(net);
        const bool full = std::string(bshape) == "full";
        std::vector<float> av(6 * 50), bv(full ? av.size() : 50);
        for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i) * 0.5f;
        for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i) + 3.f;
        s.set_input("a", tensor_of({6, 50}, av));
        s.set_input("b", full ? tensor_of({6, 50}, bv) : tensor_of({50}, bv));
        const Tensor z = s.get("z");
        for (size_t i = 0; i < av.size(); ++i) {
            const float y = -av[i] - bv[full ? i : i % 50];
            ASSERT_EQ(z.data<float>()[i], y * y) << bshape << " " << i;
        }
    }
}
