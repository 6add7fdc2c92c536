// Math layers (ncnn format) through the Op interface and through Net/Session:
// Softmax, LayerNorm, BatchNorm, Scale, LRN, Reduction, Gemm, MatMul,
// MultiHeadAttention, Interp. Every expected value comes from a naive
// reference written here from the layer's formula (in double), never from the
// op's code; every param form and the error cases are covered. A transformer
// block cut from the vision_transformer zoo model runs against a reference
// built from the same random .bin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "kestrel/kestrel.h"
#include "kestrel/op.h"
#include "layer_test_util.h"
#include "kestrel/param_dict.h"
#include "kestrel/tensor.h"
#include "runtime/analysis.h"

using namespace kestrel;

namespace {

// ---- driving one layer ------------------------------------------------------

// Hands the op its weights in order and records what it asked for.
class ListReader : public WeightReader {
public:
    explicit ListReader(std::vector<Tensor> w) : w_(std::move(w)) {}
    Tensor load(int64_t count, WeightEncoding enc) override
    {
        asked.push_back({count, enc});
        if (next_ >= w_.size()) fail("test gave only ", w_.size(), " weights");
        Tensor t = w_[next_++];
        if (t.numel() != count) fail("weight #", next_, " has ", t.numel(), " values, op wants ", count);
        return t.reshaped({count});
    }
    Tensor load_typed(const Shape&, DType) override { fail("math ops load no typed weights"); }
    size_t unused() const { return w_.size() - next_; }
    std::vector<std::pair<int64_t, WeightEncoding>> asked;

private:
    std::vector<Tensor> w_;
    size_t next_ = 0;
};

std::unique_ptr<Op> make_op(const std::string& type, const ParamDict& pd, const std::vector<Tensor>& weights = {},
                            ListReader* record = nullptr)
{
    auto op = create_op(type);
    if (!op) fail("type ", type, " is not registered");
    op->type = type;
    op->name = "t0";
    op->load_param(pd);
    ListReader r(weights);
    op->load_model(r);
    if (r.unused() != 0) fail(r.unused(), " weights left unused");
    if (record) *record = r;
    return op;
}

ThreadPool& pool()
{
    static ThreadPool p(3);
    return p;
}

TensorDesc desc(const Shape& s)
{
    TensorDesc d;
    d.shape = s;
    return d;
}

std::vector<Tensor> run_all(const Op& op, const std::vector<Tensor>& in, int threads = 1, size_t outputs = 1)
{
    std::vector<TensorDesc> descs;
    for (const auto& t : in) descs.push_back(desc(t.shape()));
    std::vector<TensorDesc> outs(outputs);
    op.infer(descs, outs);
    std::vector<Tensor> out;
    for (const auto& d : outs) out.emplace_back(d.shape, d.dtype);
    op.run(in, out, ExecContext(&pool(), threads));
    return out;
}

Tensor run(const Op& op, const std::vector<Tensor>& in, int threads = 1) { return run_all(op, in, threads)[0]; }

Shape infer_shape(const Op& op, const std::vector<Shape>& shapes, size_t outputs = 1)
{
    std::vector<TensorDesc> descs;
    for (const auto& s : shapes) descs.push_back(desc(s));
    std::vector<TensorDesc> outs(outputs);
    op.infer(descs, outs);
    return outs[0].shape;
}

// Output written over input 0 (what the planner does for in-place ops).
Tensor run_inplace(const Op& op, const std::vector<Tensor>& in, int threads = 1)
{
    EXPECT_TRUE(op.supports_inplace());
    std::vector<Tensor> ins = in;
    ins[0] = in[0].clone();
    std::vector<Tensor> out{ins[0]};
    std::vector<TensorDesc> descs;
    for (const auto& t : ins) descs.push_back(desc(t.shape()));
    std::vector<TensorDesc> outs(1);
    op.infer(descs, outs);
    EXPECT_EQ(outs[0].shape, in[0].shape());
    op.run(ins, out, ExecContext(&pool(), threads));
    return out[0];
}

using layer_test::error_of;

#define EXPECT_ERROR(stmt, substr)                                                                                     \
    do {                                                                                                               \
        const std::string msg_ = error_of([&] { stmt; });                                                              \
        EXPECT_NE(msg_.find(substr), std::string::npos) << "message: " << msg_;                                       \
    } while (0)

// ---- data -------------------------------------------------------------------

std::mt19937& rng()
{
    static std::mt19937 r(7767517);
    return r;
}

std::vector<float> randv(int64_t n, float lo = -1.5f, float hi = 1.5f)
{
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = d(rng());
    return v;
}

Tensor tensor(const Shape& s, const std::vector<float>& v)
{
    Tensor t(s, DType::F32);
    EXPECT_EQ(static_cast<size_t>(t.numel()), v.size());
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
}

Tensor rand_tensor(const Shape& s, float lo = -1.5f, float hi = 1.5f) { return tensor(s, randv(shape_numel(s), lo, hi)); }

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.numel()); }

void expect_close(const Tensor& got, const Shape& shape, const std::vector<double>& ref, double atol = 1e-5,
                  double rtol = 1e-5)
{
    ASSERT_EQ(got.shape(), shape);
    ASSERT_EQ(static_cast<size_t>(got.numel()), ref.size());
    const float* g = got.data<float>();
    for (size_t i = 0; i < ref.size(); ++i) {
        if (std::isnan(ref[i])) {
            ASSERT_TRUE(std::isnan(g[i])) << "at " << i;
            continue;
        }
        if (std::isinf(ref[i])) {
            ASSERT_EQ(static_cast<double>(g[i]), ref[i]) << "at " << i;
            continue;
        }
        ASSERT_LE(std::fabs(g[i] - ref[i]), atol + rtol * std::fabs(ref[i]))
            << "at " << i << ": got " << g[i] << ", expected " << ref[i];
    }
}

bool same_bits(const Tensor& a, const Tensor& b)
{
    return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

// One `id=value` of a ParamDict built in a test; integral values are stored as ints.
struct KV {
    template <class T>
    KV(int i, T v) : id(i), value(static_cast<double>(v))
    {
    }
    int id;
    double value;
};

ParamDict params(std::initializer_list<KV> kv)
{
    ParamDict pd;
    for (const KV& e : kv) {
        if (e.value == std::floor(e.value) && std::fabs(e.value) < 1e9) pd.set_int(e.id, static_cast<int>(e.value));
        else pd.set_float(e.id, static_cast<float>(e.value));
    }
    return pd;
}

std::vector<int64_t> strides_of(const Shape& s)
{
    std::vector<int64_t> st(s.size(), 1);
    for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

// Index tuple of a flat position.
std::vector<int64_t> unravel(int64_t flat, const Shape& s)
{
    std::vector<int64_t> idx(s.size());
    for (size_t i = s.size(); i-- > 0;) {
        idx[i] = flat % s[i];
        flat /= s[i];
    }
    return idx;
}

} // namespace

// =============================================================================
// Softmax
// =============================================================================

namespace {

std::vector<double> ref_softmax(const Shape& s, const std::vector<float>& x, int axis)
{
    const auto st = strides_of(s);
    std::vector<double> y(x.size());
    for (int64_t f = 0; f < static_cast<int64_t>(x.size()); ++f) {
        auto idx = unravel(f, s);
        if (idx[axis] != 0) continue;
        double mx = -INFINITY;
        for (int64_t k = 0; k < s[axis]; ++k) mx = std::max(mx, static_cast<double>(x[f + k * st[axis]]));
        double sum = 0;
        for (int64_t k = 0; k < s[axis]; ++k) sum += std::exp(x[f + k * st[axis]] - mx);
        for (int64_t k = 0; k < s[axis]; ++k) y[f + k * st[axis]] = std::exp(x[f + k * st[axis]] - mx) / sum;
    }
    return y;
}

} // namespace

TEST(Softmax, EveryAxisOfEveryRankPositiveAndNegative)
{
    const std::vector<Shape> shapes = {{7}, {5, 6}, {3, 4, 5}, {2, 3, 4, 5}, {3, 300}, {300, 3}, {2, 3, 2, 2, 3}};
    for (const Shape& s : shapes) {
        const int rank = static_cast<int>(s.size());
        for (int axis = -rank; axis < rank; ++axis) {
            SCOPED_TRACE(shape_str(s) + " axis " + std::to_string(axis));
            const auto x = randv(shape_numel(s), -4.f, 4.f);
            auto op = make_op("Softmax", params({{0, axis}, {1, 1}}));
            const int a = axis < 0 ? axis + rank : axis;
            const Tensor y = run(*op, {tensor(s, x)});
            expect_close(y, s, ref_softmax(s, x, a), 1e-6, 1e-5);
            EXPECT_TRUE(same_bits(y, run(*op, {tensor(s, x)}, 3)));
            EXPECT_TRUE(same_bits(y, run_inplace(*op, {tensor(s, x)}, 2)));
        }
    }
}

TEST(Softmax, DefaultsAxis0AndRank1IgnoresAxis)
{
    const auto x = randv(12);
    // No params: axis 0, fixbug0 0 is fine for axis 0.
    auto op = make_op("Softmax", ParamDict());
    expect_close(run(*op, {tensor({3, 4}, x)}), {3, 4}, ref_softmax({3, 4}, x, 0), 1e-6, 1e-5);
    // ncnn normalizes a 1-D blob whole for any axis.
    auto op2 = make_op("Softmax", params({{0, 2}, {1, 1}}));
    expect_close(run(*op2, {tensor({12}, x)}), {12}, ref_softmax({12}, x, 0), 1e-6, 1e-5);
}

TEST(Softmax, NumericallyStableForLargeInputs)
{
    const std::vector<float> x = {1000.f, 1001.f, 999.f, -1000.f, 88.f, 3e38f};
    auto op = make_op("Softmax", params({{0, 0}, {1, 1}}));
    const Tensor y = run(*op, {tensor({6}, x)});
    for (float v : values(y)) EXPECT_TRUE(std::isfinite(v));
    EXPECT_FLOAT_EQ(values(y)[5], 1.f);
    const std::vector<float> x2 = {1000.f, 1001.f, 999.f};
    expect_close(run(*op, {tensor({3}, x2)}), {3}, ref_softmax({3}, x2, 0), 1e-7, 1e-5);
}

TEST(Softmax, Errors)
{
    EXPECT_ERROR(make_op("Softmax", params({{0, 1}})), "fixbug0");
    EXPECT_ERROR(make_op("Softmax", params({{0, -1}, {1, 0}})), "fixbug0");
    auto op = make_op("Softmax", params({{0, 2}, {1, 1}}));
    EXPECT_ERROR(infer_shape(*op, {{3, 4}}), "out of range");
    auto op2 = make_op("Softmax", params({{0, -4}, {1, 1}}));
    EXPECT_ERROR(infer_shape(*op2, {{2, 3, 4}}), "out of range");
    EXPECT_ERROR(infer_shape(*op2, {{2, 3, 4}, {2}}), "input");
    std::vector<TensorDesc> in{desc({3})}, out(1);
    in[0].dtype = DType::I8;
    EXPECT_ERROR(op2->infer(in, out), "float32");
}

// =============================================================================
// LayerNorm
// =============================================================================

namespace {

// ncnn's grouping rule spelled out in [w,h,d,c]: 1-D whole, 2-D rows, 3-D rows
// if affine_size == w else channels, 4-D rows / planes / channels.
int64_t ln_group(const Shape& s, int affine_size)
{
    const size_t r = s.size();
    const int64_t w = s[r - 1], h = r >= 2 ? s[r - 2] : 1, d = r == 4 ? s[1] : 1;
    if (r <= 2) return w;
    if (r == 3) return affine_size == w ? w : w * h;
    if (affine_size == w) return w;
    if (affine_size == w * h) return w * h;
    return w * h * d;
}

std::vector<double> ref_layer_norm(const std::vector<float>& x, int64_t group, double eps, const std::vector<float>* gamma,
                                   const std::vector<float>* beta)
{
    std::vector<double> y(x.size());
    for (size_t g0 = 0; g0 < x.size(); g0 += static_cast<size_t>(group)) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < group; ++i) mean += x[g0 + i];
        mean /= group;
        for (int64_t i = 0; i < group; ++i) var += (x[g0 + i] - mean) * (x[g0 + i] - mean);
        var /= group;
        for (int64_t i = 0; i < group; ++i) {
            double v = (x[g0 + i] - mean) / std::sqrt(var + eps);
            if (gamma) v = v * (*gamma)[i] + (*beta)[i];
            y[g0 + i] = v;
        }
    }
    return y;
}

} // namespace

TEST(LayerNorm, EveryGroupingAffineAndNot)
{
    struct Case {
        Shape s;
        int affine_size;
    };
    const std::vector<Case> cases = {
        {{10}, 10},       {{4, 10}, 10},       {{3, 4, 10}, 10},   {{3, 4, 10}, 40},    {{2, 3, 4, 5}, 5},
        {{2, 3, 4, 5}, 20}, {{2, 3, 4, 5}, 60}, {{3, 1, 768}, 768}, {{145, 768}, 768},
    };
    for (const Case& c : cases) {
        for (int affine = 0; affine < 2; ++affine) {
            SCOPED_TRACE(shape_str(c.s) + " affine_size " + std::to_string(c.affine_size) + " affine " +
                         std::to_string(affine));
            const auto x = randv(shape_numel(c.s), -2.f, 3.f);
            const auto gamma = randv(c.affine_size), beta = randv(c.affine_size);
            ParamDict pd = params({{0, c.affine_size}, {2, affine}});
            pd.set_float(1, 1e-5f);
            ListReader rec({});
            auto op = affine ? make_op("LayerNorm", pd, {tensor({c.affine_size}, gamma), tensor({c.affine_size}, beta)}, &rec)
                             : make_op("LayerNorm", pd, {}, &rec);
            if (affine) {
                ASSERT_EQ(rec.asked.size(), 2u);
                EXPECT_EQ(rec.asked[0].second, WeightEncoding::Raw);
                EXPECT_EQ(rec.asked[1].second, WeightEncoding::Raw);
            } else {
                EXPECT_TRUE(rec.asked.empty());
            }
            const auto ref = ref_layer_norm(x, ln_group(c.s, c.affine_size), 1e-5, affine ? &gamma : nullptr,
                                            affine ? &beta : nullptr);
            const Tensor y = run(*op, {tensor(c.s, x)});
            expect_close(y, c.s, ref, 2e-5, 2e-5);
            EXPECT_TRUE(same_bits(y, run(*op, {tensor(c.s, x)}, 3)));
            EXPECT_TRUE(same_bits(y, run_inplace(*op, {tensor(c.s, x)}, 2)));
        }
    }
}

TEST(LayerNorm, DefaultEpsIs0001AndAffineDefaultsOn)
{
    // Tiny variance: eps dominates, so the default value is visible.
    std::vector<float> x = {0.01f, -0.01f, 0.02f, 0.f};
    const std::vector<float> gamma = {1, 2, 3, 4}, beta = {0.5f, 0, 0, -1};
    auto op = make_op("LayerNorm", params({{0, 4}}), {tensor({4}, gamma), tensor({4}, beta)});
    expect_close(run(*op, {tensor({4}, x)}), {4}, ref_layer_norm(x, 4, 0.001, &gamma, &beta), 1e-6, 1e-5);
}

TEST(LayerNorm, Errors)
{
    EXPECT_ERROR(make_op("LayerNorm", params({{0, 0}})), "affine_size");
    EXPECT_ERROR(make_op("LayerNorm", params({{0, 4}, {2, 2}})), "affine (param 2)");
    auto op = make_op("LayerNorm", params({{0, 4}}), {rand_tensor({4}), rand_tensor({4})});
    EXPECT_ERROR(infer_shape(*op, {{3, 5}}), "affine_size");
    EXPECT_ERROR(infer_shape(*op, {{2, 3, 5}}), "does not match");
    EXPECT_ERROR(infer_shape(*op, {{1, 2, 3, 4, 5}}), "rank 1-4");
    EXPECT_ERROR(make_op("LayerNorm", params({{0, 4}}), {rand_tensor({4})}), "only 1 weights");
}

// =============================================================================
// BatchNorm and Scale
// =============================================================================

TEST(BatchNorm, EveryRankAndNcnnPrecompute)
{
    const std::vector<Shape> shapes = {{6}, {6, 7}, {6, 4, 5}, {6, 2, 3, 4}};
    for (const Shape& s : shapes) {
        for (float eps : {0.f, 1e-3f}) {
            SCOPED_TRACE(shape_str(s) + " eps " + std::to_string(eps));
            const int64_t C = 6;
            auto slope = randv(C), mean = randv(C), var = randv(C, 0.1f, 2.f), bias = randv(C);
            var[2] = 0.f; // sqrt(0 + eps) == 0 is replaced by 1e-4 when eps == 0
            ParamDict pd = params({{0, 6}});
            if (eps != 0.f) pd.set_float(1, eps);
            ListReader rec({});
            auto op = make_op("BatchNorm", pd,
                              {tensor({C}, slope), tensor({C}, mean), tensor({C}, var), tensor({C}, bias)}, &rec);
            ASSERT_EQ(rec.asked.size(), 4u);
            for (const auto& a : rec.asked) EXPECT_EQ(a, std::make_pair(C, WeightEncoding::Raw));
            const auto x = randv(shape_numel(s));
            std::vector<double> ref(x.size());
            const int64_t inner = shape_numel(s) / C;
            for (int64_t q = 0; q < C; ++q) {
                double sd = std::sqrt(static_cast<double>(var[q]) + eps);
                if (sd == 0) sd = 1e-4;
                for (int64_t i = 0; i < inner; ++i)
                    ref[q * inner + i] = (x[q * inner + i] - mean[q]) / sd * slope[q] + bias[q];
            }
            const Tensor y = run(*op, {tensor(s, x)});
            expect_close(y, s, ref, 1e-4, 1e-5);
            EXPECT_TRUE(same_bits(y, run_inplace(*op, {tensor(s, x)}, 3)));
        }
    }
}

TEST(BatchNorm, Errors)
{
    EXPECT_ERROR(make_op("BatchNorm", ParamDict()), "channels");
    auto op = make_op("BatchNorm", params({{0, 3}}), {rand_tensor({3}), rand_tensor({3}), rand_tensor({3}), rand_tensor({3})});
    EXPECT_ERROR(infer_shape(*op, {{4, 3}}), "channels (param 0) is 3");
    EXPECT_ERROR(infer_shape(*op, {{4}}), "4 elements");
    EXPECT_ERROR(infer_shape(*op, {{3, 1, 1, 1, 1}}), "rank 1-4");
}

TEST(Scale, WeightsWithAndWithoutBiasEveryRank)
{
    const std::vector<Shape> shapes = {{5}, {5, 3}, {5, 2, 3}, {5, 2, 2, 3}};
    for (const Shape& s : shapes) {
        for (int bias_term = 0; bias_term < 2; ++bias_term) {
            SCOPED_TRACE(shape_str(s) + " bias " + std::to_string(bias_term));
            const auto sc = randv(5), b = randv(5), x = randv(shape_numel(s));
            std::vector<Tensor> w{tensor({5}, sc)};
            if (bias_term) w.push_back(tensor({5}, b));
            ListReader rec({});
            auto op = make_op("Scale", params({{0, 5}, {1, bias_term}}), w, &rec);
            ASSERT_EQ(rec.asked.size(), static_cast<size_t>(1 + bias_term));
            for (const auto& a : rec.asked) EXPECT_EQ(a.second, WeightEncoding::Raw);
            const int64_t inner = shape_numel(s) / 5;
            std::vector<double> ref(x.size());
            for (int64_t q = 0; q < 5; ++q)
                for (int64_t i = 0; i < inner; ++i)
                    ref[q * inner + i] = static_cast<double>(x[q * inner + i]) * sc[q] + (bias_term ? b[q] : 0.0);
            const Tensor y = run(*op, {tensor(s, x)});
            expect_close(y, s, ref, 1e-6, 1e-6);
            EXPECT_TRUE(same_bits(y, run_inplace(*op, {tensor(s, x)}, 2)));
        }
    }
}

TEST(Scale, ScaleFromSecondInput)
{
    auto op = make_op("Scale", params({{0, -233}}));
    for (const Shape& ss : std::vector<Shape>{{4}, {4, 1, 1}}) {
        const auto x = randv(4 * 6), sc = randv(4);
        std::vector<double> ref(x.size());
        for (int q = 0; q < 4; ++q)
            for (int i = 0; i < 6; ++i) ref[q * 6 + i] = static_cast<double>(x[q * 6 + i]) * sc[q];
        expect_close(run(*op, {tensor({4, 2, 3}, x), tensor(ss, sc)}), {4, 2, 3}, ref, 1e-6, 1e-6);
        // In place, even when the scales live in the overwritten buffer (views of one blob).
        Tensor shared = tensor({4, 2, 3}, x);
        std::vector<float> head(x.begin(), x.begin() + 4);
        std::vector<double> ref2(x.size());
        for (int q = 0; q < 4; ++q)
            for (int i = 0; i < 6; ++i) ref2[q * 6 + i] = static_cast<double>(x[q * 6 + i]) * head[q];
        std::vector<Tensor> out{shared};
        op->run({shared, Tensor::wrap(shared.raw(), ss)}, out, ExecContext(&pool(), 2));
        expect_close(out[0], {4, 2, 3}, ref2, 1e-6, 1e-6);
    }
}

TEST(Scale, Errors)
{
    EXPECT_ERROR(make_op("Scale", ParamDict()), "scale_data_size");
    EXPECT_ERROR(make_op("Scale", params({{0, -233}, {1, 1}})), "bias_term");
    EXPECT_ERROR(make_op("Scale", params({{0, 3}, {1, 2}})), "bias_term");
    auto op = make_op("Scale", params({{0, 3}}), {rand_tensor({3})});
    EXPECT_ERROR(infer_shape(*op, {{4, 5}}), "scale_data_size (param 0) is 3");
    EXPECT_ERROR(infer_shape(*op, {{3, 5}, {3}}), "input");
    auto op2 = make_op("Scale", params({{0, -233}}));
    EXPECT_ERROR(infer_shape(*op2, {{3, 5}}), "input");
    EXPECT_ERROR(infer_shape(*op2, {{3, 5}, {4}}), "must hold 3 values");
}

// =============================================================================
// LRN
// =============================================================================

namespace {

std::vector<double> ref_lrn(const std::vector<float>& x, int64_t c, int64_t h, int64_t w, int region, int ls, double alpha,
                            double beta, double bias)
{
    std::vector<double> y(x.size());
    auto at = [&](int64_t q, int64_t i, int64_t j) -> double {
        if (q < 0 || q >= c || i < 0 || i >= h || j < 0 || j >= w) return 0.0;
        return x[(q * h + i) * w + j];
    };
    for (int64_t q = 0; q < c; ++q)
        for (int64_t i = 0; i < h; ++i)
            for (int64_t j = 0; j < w; ++j) {
                double ss = 0;
                double n = 0;
                if (region == 0) {
                    // channels q - ls/2 .. q + ls/2, divided by local_size (ncnn)
                    for (int64_t p = q - ls / 2; p <= q + ls / 2; ++p) ss += at(p, i, j) * at(p, i, j);
                    n = ls;
                } else {
                    // square of side ls starting ls/2 before, zero padded, divided by ls^2
                    for (int64_t a = i - ls / 2; a < i - ls / 2 + ls; ++a)
                        for (int64_t b = j - ls / 2; b < j - ls / 2 + ls; ++b) ss += at(q, a, b) * at(q, a, b);
                    n = static_cast<double>(ls) * ls;
                }
                y[(q * h + i) * w + j] = at(q, i, j) * std::pow(bias + alpha / n * ss, -beta);
            }
    return y;
}

} // namespace

TEST(LRN, AcrossAndWithinChannelEveryParam)
{
    struct Case {
        int region, ls;
        double alpha, beta, bias;
        bool defaults;
    };
    const std::vector<Case> cases = {
        {0, 5, 1, 0.75, 1, true}, {1, 5, 1, 0.75, 1, false}, {0, 3, 1e-4, 0.75, 1, false}, {0, 4, 0.5, 0.6, 2, false},
        {1, 3, 2.0, 0.5, 1.5, false}, {1, 4, 0.7, 1.0, 1, false}, {0, 1, 0.3, 0.75, 1, false}, {1, 1, 0.3, 0.75, 1, false},
    };
    const std::vector<Shape> shapes = {{7, 5, 6}, {6, 9}, {11}};
    for (const Case& c : cases) {
        for (const Shape& s : shapes) {
            SCOPED_TRACE("region " + std::to_string(c.region) + " ls " + std::to_string(c.ls) + " " + shape_str(s));
            ParamDict pd;
            if (!c.defaults) {
                pd = params({{0, c.region}, {1, c.ls}});
                pd.set_float(2, static_cast<float>(c.alpha));
                pd.set_float(3, static_cast<float>(c.beta));
                pd.set_float(4, static_cast<float>(c.bias));
            }
            auto op = make_op("LRN", pd);
            const auto x = randv(shape_numel(s), -2.f, 2.f);
            const int64_t w = s.back(), h = s.size() >= 2 ? s[s.size() - 2] : 1, ch = s.size() == 3 ? s[0] : 1;
            const Tensor y = run(*op, {tensor(s, x)});
            expect_close(y, s, ref_lrn(x, ch, h, w, c.region, c.ls, c.alpha, c.beta, c.bias), 1e-5, 1e-5);
            EXPECT_FALSE(op->supports_inplace()); // windows read planes already written
            EXPECT_TRUE(same_bits(y, run(*op, {tensor(s, x)}, 3)));
        }
    }
}

TEST(LRN, Errors)
{
    EXPECT_ERROR(make_op("LRN", params({{0, 2}})), "region_type");
    EXPECT_ERROR(make_op("LRN", params({{1, 0}})), "local_size");
    auto op = make_op("LRN", ParamDict());
    EXPECT_ERROR(infer_shape(*op, {{2, 3, 4, 5}}), "rank 1-3");
}

// =============================================================================
// Reduction
// =============================================================================

namespace {

double ref_reduce(int op, const std::vector<double>& v)
{
    double r = 0;
    switch (op) {
    case 0: case 3: for (double x : v) r += x; return r;
    case 1: case 7: for (double x : v) r += std::fabs(x); return r;
    case 2: for (double x : v) r += x * x; return r;
    case 8: for (double x : v) r += x * x; return std::sqrt(r);
    case 4: r = -FLT_MAX; for (double x : v) r = std::max(r, x); return r;
    case 5: r = FLT_MAX; for (double x : v) r = std::min(r, x); return r;
    case 6: r = 1; for (double x : v) r *= x; return r;
    case 9: for (double x : v) r += x; return std::log(r);
    case 10: for (double x : v) r += std::exp(x); return std::log(r);
    }
    ADD_FAILURE() << "bad op";
    return 0;
}

// reduced[i]: axis i is reduced. Returns the output shape and values.
std::vector<double> ref_reduction(int op, const Shape& s, const std::vector<float>& x, const std::vector<bool>& reduced,
                                  bool keepdims, double coeff, Shape& out_shape)
{
    out_shape.clear();
    Shape kept_shape;
    int64_t count = 1;
    for (size_t i = 0; i < s.size(); ++i) {
        if (reduced[i]) {
            count *= s[i];
            if (keepdims) out_shape.push_back(1);
        } else {
            out_shape.push_back(s[i]);
            kept_shape.push_back(s[i]);
        }
    }
    if (out_shape.empty()) out_shape.push_back(1);
    std::map<std::vector<int64_t>, std::vector<double>> groups;
    for (int64_t f = 0; f < static_cast<int64_t>(x.size()); ++f) {
        auto idx = unravel(f, s);
        std::vector<int64_t> key;
        for (size_t i = 0; i < s.size(); ++i)
            if (!reduced[i]) key.push_back(idx[i]);
        groups[key].push_back(x[f]);
    }
    std::vector<double> y; // std::map orders keys lexicographically == row-major order of kept axes
    for (const auto& [key, v] : groups) {
        double r = ref_reduce(op, v) * coeff;
        if (op == 3) r /= count;
        y.push_back(r);
    }
    return y;
}

} // namespace

TEST(Reduction, EveryOperationAxesKeepdimsAndRank)
{
    struct Case {
        Shape s;
        std::vector<int> axes; // empty: reduce_all
    };
    const std::vector<Case> cases = {
        {{7}, {}},          {{7}, {0}},        {{4, 5}, {}},         {{4, 5}, {0}},       {{4, 5}, {1}},
        {{4, 5}, {-1}},     {{4, 5}, {0, 1}},  {{3, 4, 5}, {}},      {{3, 4, 5}, {0}},    {{3, 4, 5}, {1}},
        {{3, 4, 5}, {2}},   {{3, 4, 5}, {0, 2}}, {{3, 4, 5}, {1, 2}}, {{3, 4, 5}, {-3, -2}}, {{3, 4, 5}, {0, 1, 2}},
        {{2, 3, 4, 5}, {}}, {{2, 3, 4, 5}, {1}}, {{2, 3, 4, 5}, {0, 3}}, {{2, 3, 4, 5}, {1, 2}}, {{2, 3, 4, 5}, {0, 1, 2}},
        {{2, 3, 4, 5}, {1, 2, 3}}, {{2, 3, 4, 5}, {3, 0, 3}}, {{2, 3, 2, 2, 3}, {1, 4}},
    };
    for (int op = 0; op <= 10; ++op) {
        for (const Case& c : cases) {
            for (int keepdims = 0; keepdims < 2; ++keepdims) {
                const double coeff = op % 2 ? 1.0 : 0.5;
                SCOPED_TRACE("op " + std::to_string(op) + " " + shape_str(c.s) + " keepdims " + std::to_string(keepdims) +
                             " axes " + std::to_string(c.axes.size()));
                // positive inputs keep PROD/LogSum meaningful
                const auto x = op == 6 || op == 9 ? randv(shape_numel(c.s), 0.5f, 1.5f) : randv(shape_numel(c.s), -2.f, 2.f);
                ParamDict pd = params({{0, op}, {4, keepdims}});
                if (coeff != 1.0) pd.set_float(2, static_cast<float>(coeff));
                std::vector<bool> reduced(c.s.size(), c.axes.empty());
                if (!c.axes.empty()) {
                    pd.set_int(1, 0);
                    pd.set_ints(3, c.axes);
                    pd.set_int(5, 1);
                    for (int a : c.axes) reduced[a < 0 ? a + c.s.size() : a] = true;
                }
                if (c.s.size() == 1) reduced[0] = true;
                auto layer = make_op("Reduction", pd);
                Shape out_shape;
                const auto ref = ref_reduction(op, c.s, x, reduced, keepdims, coeff, out_shape);
                const Tensor y = run(*layer, {tensor(c.s, x)});
                expect_close(y, out_shape, ref, 1e-5, 1e-5);
                EXPECT_TRUE(same_bits(y, run(*layer, {tensor(c.s, x)}, 3)));
            }
        }
    }
}

TEST(Reduction, DefaultsReduceAllSumToOneValue)
{
    const auto x = randv(24);
    auto op = make_op("Reduction", ParamDict());
    double sum = 0;
    for (float v : x) sum += v;
    expect_close(run(*op, {tensor({2, 3, 4}, x)}), {1}, {sum}, 1e-5, 1e-5);
    // reduce_all ignores axes
    ParamDict pd = params({{0, 4}, {1, 1}, {4, 1}, {5, 1}});
    pd.set_ints(3, {1});
    auto op2 = make_op("Reduction", pd);
    EXPECT_EQ(infer_shape(*op2, {{2, 3, 4}}), (Shape{1, 1, 1}));
}

TEST(Reduction, ZooFormMeanOverHW)
{
    // mobilenet_v3-style squeeze: 0=3 1=0 -23303=2,1,2 4=1 5=1 on (c, h, w)
    Net net;
    net.load_param_mem("7767517\n2 2\nInput in 0 1 x\nReduction r 1 1 x y 0=3 1=0 -23303=2,1,2 4=1 5=1\n");
    Session s(net);
    const auto x = randv(6 * 7 * 8);
    s.set_input("x", tensor({6, 7, 8}, x));
    std::vector<double> ref(6, 0);
    for (int q = 0; q < 6; ++q) {
        for (int i = 0; i < 56; ++i) ref[q] += x[q * 56 + i];
        ref[q] /= 56;
    }
    expect_close(s.get("y"), {6, 1, 1}, ref, 1e-6, 1e-5);
}

TEST(Reduction, SpecialValues)
{
    // LogSumExp stays finite for large inputs; L2 of zeros is 0; MAX of -inf is -FLT_MAX as ncnn.
    auto lse = make_op("Reduction", params({{0, 10}}));
    expect_close(run(*lse, {tensor({3}, {1000.f, 1000.f, 999.f})}), {1},
                 {1000.0 + std::log(2.0 + std::exp(-1.0))}, 1e-4, 1e-6);
    auto l2 = make_op("Reduction", params({{0, 8}}));
    expect_close(run(*l2, {tensor({3}, {0.f, 0.f, 0.f})}), {1}, {0.0}, 0, 0);
    auto mx = make_op("Reduction", params({{0, 4}}));
    expect_close(run(*mx, {tensor({2}, {-INFINITY, -INFINITY})}), {1}, {-FLT_MAX}, 0, 0);
}

TEST(Reduction, Errors)
{
    EXPECT_ERROR(make_op("Reduction", params({{0, 11}})), "operation");
    EXPECT_ERROR(make_op("Reduction", params({{1, 2}})), "reduce_all");
    ParamDict old = params({{1, 0}});
    old.set_ints(3, {1});
    EXPECT_ERROR(make_op("Reduction", old), "fixbug0");
    ParamDict bad = params({{1, 0}, {5, 1}});
    bad.set_ints(3, {3});
    auto op = make_op("Reduction", bad);
    EXPECT_ERROR(infer_shape(*op, {{2, 3, 4}}), "out of range");
    auto none = make_op("Reduction", params({{1, 0}}));
    EXPECT_ERROR(infer_shape(*none, {{2, 3}}), "no axis");
    EXPECT_EQ(infer_shape(*none, {{5}}), (Shape{1})); // 1-D is reduced whole, as ncnn
    EXPECT_ERROR(infer_shape(*none, {{0, 3}}), "empty");
}

// =============================================================================
// Gemm
// =============================================================================

namespace {

struct GemmCase {
    int transA = 0, transB = 0, constA = 0, constB = 0, constC = 0;
    int typeC = 0;      // constant C type (-1..4)
    int runtimeC = -1;  // -1 none, else index into runtime C shapes below
    int n1m = 0, otrans = 0;
    float alpha = 1.f, beta = 1.f;
};

// Runtime C shapes: [1], [M], [N], (M,1), (M,N), (1,N).
Shape runtime_c_shape(int i, int64_t M, int64_t N)
{
    switch (i) {
    case 0: return {1};
    case 1: return {M};
    case 2: return {N};
    case 3: return {M, 1};
    case 4: return {M, N};
    default: return {1, N};
    }
}

// C value at (i, j) given the C data laid out as its shape says.
double c_at(const Shape& cs, const std::vector<float>& c, int64_t i, int64_t j, int64_t M, int64_t N)
{
    (void)N;
    if (cs.size() == 1 && cs[0] == 1) return c[0];
    if (cs.size() == 1) return cs[0] == M && cs[0] != N ? c[i] : c[j]; // ncnn: [N] wins when M == N
    if (cs[1] == 1) return c[i];
    if (cs[0] == 1) return c[j];
    return c[i * cs[1] + j];
}

void run_gemm_case(const GemmCase& g, int64_t M, int64_t N, int64_t K, int threads = 1)
{
    SCOPED_TRACE(::testing::Message() << "tA " << g.transA << " tB " << g.transB << " cA " << g.constA << " cB "
                                      << g.constB << " cC " << g.constC << " typeC " << g.typeC << " rtC " << g.runtimeC
                                      << " N1M " << g.n1m << " otrans " << g.otrans);
    // Operands in storage layout.
    const Shape a_shape = g.transA ? Shape{K, M} : Shape{M, K};
    const Shape b_shape = g.transB ? Shape{N, K} : Shape{K, N};
    const auto a = randv(M * K), b = randv(N * K);
    Shape c_shape;
    bool has_c = false;
    if (g.constC && g.typeC != -1) {
        const Shape shapes[5] = {{1}, {M}, {M, 1}, {M, N}, {1, N}};
        c_shape = shapes[g.typeC];
        has_c = true;
    } else if (!g.constC && g.runtimeC >= 0) {
        c_shape = runtime_c_shape(g.runtimeC, M, N);
        has_c = true;
    }
    const auto c = has_c ? randv(shape_numel(c_shape)) : std::vector<float>();

    ParamDict pd;
    pd.set_float(0, g.alpha);
    pd.set_float(1, g.beta);
    pd.set_int(2, g.transA);
    pd.set_int(3, g.transB);
    pd.set_int(4, g.constA);
    pd.set_int(5, g.constB);
    pd.set_int(6, g.constC);
    pd.set_int(7, g.constA || (g.constC && g.typeC >= 1 && g.typeC <= 3) ? static_cast<int>(M) : 0);
    pd.set_int(8, g.constB || (g.constC && g.typeC >= 3) ? static_cast<int>(N) : 0);
    pd.set_int(9, g.constA || g.constB ? static_cast<int>(K) : 0);
    pd.set_int(10, g.typeC);
    pd.set_int(11, g.n1m);
    pd.set_int(14, g.otrans);
    std::vector<Tensor> weights, inputs;
    if (g.constA) weights.push_back(tensor(a_shape, a));
    else inputs.push_back(tensor(a_shape, a));
    if (g.constB) weights.push_back(tensor(b_shape, b));
    else inputs.push_back(tensor(b_shape, b));
    if (has_c) (g.constC ? weights : inputs).push_back(tensor(c_shape, c));
    ListReader rec({});
    auto op = make_op("Gemm", pd, weights, &rec);
    for (const auto& w : rec.asked) EXPECT_EQ(w.second, WeightEncoding::Tagged);

    std::vector<double> ref(static_cast<size_t>(M * N));
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double s = 0;
            for (int64_t k = 0; k < K; ++k) {
                const double av = g.transA ? a[k * M + i] : a[i * K + k];
                const double bv = g.transB ? b[j * K + k] : b[k * N + j];
                s += av * bv;
            }
            const double cv = has_c ? c_at(c_shape, c, i, j, M, N) : 0.0;
            const double v = g.alpha * (s + g.beta * cv);
            if (g.otrans) ref[j * M + i] = v;
            else ref[i * N + j] = v;
        }
    Shape out = g.otrans ? Shape{N, M} : Shape{M, N};
    if (g.n1m) out = {out[0], 1, out[1]};
    const Tensor y = run(*op, inputs, threads);
    expect_close(y, out, ref, 1e-5, 1e-5);
}

} // namespace

TEST(Gemm, EveryTransposeConstantAndOutputForm)
{
    const int64_t M = 3, N = 5, K = 4;
    for (int transA = 0; transA < 2; ++transA)
        for (int transB = 0; transB < 2; ++transB)
            for (int constA = 0; constA < 2; ++constA)
                for (int constB = 0; constB < 2; ++constB)
                    for (int out_form = 0; out_form < 4; ++out_form) {
                        GemmCase g;
                        g.transA = transA, g.transB = transB, g.constA = constA, g.constB = constB;
                        g.n1m = out_form & 1, g.otrans = out_form >> 1;
                        g.alpha = 1.5f, g.beta = -0.75f;
                        // constant C of every type, and "no C"
                        for (int t = -1; t <= 4; ++t) {
                            g.constC = 1, g.typeC = t, g.runtimeC = -1;
                            run_gemm_case(g, M, N, K);
                        }
                        // runtime C of every shape, and none
                        for (int rc = -1; rc < 6; ++rc) {
                            g.constC = 0, g.typeC = 0, g.runtimeC = rc;
                            if (constA && constB && rc < 0) continue; // nothing to feed: covered below
                            run_gemm_case(g, M, N, K);
                        }
                    }
}

TEST(Gemm, DefaultsAlphaBetaOneAndAllConstantNoInputs)
{
    GemmCase g;
    g.constA = g.constB = 1;
    g.constC = 0;
    g.runtimeC = -1;
    run_gemm_case(g, 2, 3, 4); // zero inputs
    g.runtimeC = 4;
    run_gemm_case(g, 2, 3, 4); // C as the only input
}

TEST(Gemm, OneDimCWhenMEqualsNIsPerColumnAsNcnn)
{
    GemmCase g;
    g.runtimeC = 1; // [M] == [N]
    g.beta = 2.f;
    run_gemm_case(g, 4, 4, 3);
}

TEST(Gemm, LargeAndMultithreaded)
{
    GemmCase g;
    g.transB = 1, g.constB = 1, g.constC = 1, g.typeC = 4;
    run_gemm_case(g, 7, 600, 33, 3);
    g.transA = 1, g.otrans = 1, g.constB = 0, g.constC = 0, g.runtimeC = 4;
    run_gemm_case(g, 1, 700, 20, 3);
}

TEST(Gemm, VisionTransformerLinearForm)
{
    // 3=1 5=1 6=1 8=N 9=K 10=4: y = x W^T + b on (seq, K); all weights tagged.
    const int64_t seq = 6, K = 48, N = 80;
    ParamDict pd = params({{3, 1}, {5, 1}, {6, 1}, {8, N}, {9, K}, {10, 4}});
    const auto W = randv(N * K), b = randv(N), x = randv(seq * K);
    ListReader rec({});
    auto op = make_op("Gemm", pd, {tensor({N, K}, W), tensor({1, N}, b)}, &rec);
    ASSERT_EQ(rec.asked.size(), 2u);
    EXPECT_EQ(rec.asked[0], std::make_pair(N * K, WeightEncoding::Tagged));
    EXPECT_EQ(rec.asked[1], std::make_pair(N, WeightEncoding::Tagged));
    std::vector<double> ref(seq * N);
    for (int64_t i = 0; i < seq; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double s = b[j];
            for (int64_t k = 0; k < K; ++k) s += static_cast<double>(x[i * K + k]) * W[j * K + k];
            ref[i * N + j] = s;
        }
    expect_close(run(*op, {tensor({seq, K}, x)}, 2), {seq, N}, ref, 1e-5, 1e-5);
    // 1-D input is one row; N1M-shaped (M, 1, K) input is M rows.
    std::vector<double> ref1(ref.begin(), ref.begin() + N);
    std::vector<float> x1(x.begin(), x.begin() + K);
    expect_close(run(*op, {tensor({K}, x1)}), {1, N}, ref1, 1e-5, 1e-5);
    expect_close(run(*op, {tensor({seq, 1, K}, x)}), {seq, N}, ref, 1e-5, 1e-5);
}

TEST(Gemm, Errors)
{
    EXPECT_ERROR(make_op("Gemm", params({{18, 1}})), "quantize_term");
    EXPECT_ERROR(make_op("Gemm", params({{4, 1}, {9, 3}})), "constantA");
    EXPECT_ERROR(make_op("Gemm", params({{5, 1}, {8, 3}})), "constantB");
    EXPECT_ERROR(make_op("Gemm", params({{6, 1}, {10, 5}})), "constant_broadcast_type_C");
    EXPECT_ERROR(make_op("Gemm", params({{6, 1}, {10, 3}, {8, 2}})), "needs M");
    EXPECT_ERROR(make_op("Gemm", params({{2, 2}})), "transA");
    // int8-tagged weights
    Tensor i8({6}, DType::I8);
    std::memset(i8.raw(), 1, 6);
    EXPECT_ERROR(make_op("Gemm", params({{5, 1}, {8, 2}, {9, 3}, {6, 1}, {10, -1}}), {i8}), "int8");
    auto op = make_op("Gemm", ParamDict());
    EXPECT_ERROR(infer_shape(*op, {{2, 3}, {4, 5}}), "K of A");
    EXPECT_ERROR(infer_shape(*op, {{2, 3}}), "input");
    EXPECT_ERROR(infer_shape(*op, {{2, 3}, {3, 5}, {7}}), "does not broadcast");
    EXPECT_ERROR(infer_shape(*op, {{2, 3}, {3, 5}, {2, 5, 1}}), "does not broadcast");
    EXPECT_ERROR(infer_shape(*op, {{2, 2, 3}, {3, 5}}), "(c, 1, w)");
    auto cc = make_op("Gemm", params({{6, 1}, {10, 3}, {7, 2}, {8, 5}}), {rand_tensor({10})});
    EXPECT_ERROR(infer_shape(*cc, {{3, 4}, {4, 5}}), "constant C is sized for M=2");
}

// =============================================================================
// MatMul
// =============================================================================

namespace {

// numpy matmul over our shapes (batch axes right-aligned, broadcast), with
// ncnn's [1] for vector . vector; transB swaps B's last two axes.
std::vector<double> ref_matmul(const Shape& as, const std::vector<float>& a, const Shape& bs, const std::vector<float>& b,
                               bool transB, Shape& out)
{
    Shape A = as, B = bs;
    const bool a_vec = A.size() == 1, b_vec = B.size() == 1;
    if (a_vec) A.insert(A.begin(), 1);
    if (b_vec) B.push_back(1);
    const int64_t M = A[A.size() - 2], K = A.back();
    const bool tb = transB && !b_vec;
    const int64_t N = tb ? B[B.size() - 2] : B.back();
    Shape ab(A.begin(), A.end() - 2), bb(B.begin(), B.end() - 2);
    const size_t nb = std::max(ab.size(), bb.size());
    while (ab.size() < nb) ab.insert(ab.begin(), 1);
    while (bb.size() < nb) bb.insert(bb.begin(), 1);
    Shape batch(nb);
    for (size_t i = 0; i < nb; ++i) batch[i] = std::max(ab[i], bb[i]);
    out = batch;
    if (!a_vec) out.push_back(M);
    if (!b_vec) out.push_back(N);
    if (out.empty()) out = {1};
    std::vector<double> y;
    const int64_t nbatch = shape_numel(batch);
    for (int64_t bi = 0; bi < nbatch; ++bi) {
        const auto idx = unravel(bi, batch);
        int64_t ao = 0, bo = 0;
        for (size_t i = 0; i < nb; ++i) {
            ao = ao * ab[i] + (ab[i] == 1 ? 0 : idx[i]);
            bo = bo * bb[i] + (bb[i] == 1 ? 0 : idx[i]);
        }
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double s = 0;
                for (int64_t k = 0; k < K; ++k) {
                    const double bv = tb ? b[bo * N * K + j * K + k] : b[bo * K * N + k * N + j];
                    s += static_cast<double>(a[ao * M * K + i * K + k]) * bv;
                }
                y.push_back(s);
            }
    }
    return y;
}

} // namespace

TEST(MatMul, EveryRankPairTransBAndBroadcast)
{
    const int64_t M = 3, K = 4, N = 5;
    auto mat = [&](int rank, bool isB, bool transB, std::vector<int64_t> batch) {
        Shape s(batch.end() - (rank - 2 > 0 ? rank - 2 : 0), batch.end());
        if (rank == 1) return Shape{K};
        if (!isB) s.insert(s.end(), {M, K});
        else if (transB) s.insert(s.end(), {N, K});
        else s.insert(s.end(), {K, N});
        return s;
    };
    const std::vector<std::vector<int64_t>> batches = {{2, 3}, {1, 3}, {2, 1}, {1, 1}};
    for (int ra = 1; ra <= 4; ++ra)
        for (int rb = 1; rb <= 4; ++rb)
            for (int transB = 0; transB < 2; ++transB)
                for (const auto& ba : batches)
                    for (const auto& bb : batches) {
                        const Shape as = mat(ra, false, false, ba), bs = mat(rb, true, transB, bb);
                        SCOPED_TRACE(shape_str(as) + " . " + shape_str(bs) + " transB " + std::to_string(transB));
                        const auto a = randv(shape_numel(as)), b = randv(shape_numel(bs));
                        Shape out;
                        const auto ref = ref_matmul(as, a, bs, b, transB, out);
                        auto op = make_op("MatMul", params({{0, transB}}));
                        const Tensor y = run(*op, {tensor(as, a), tensor(bs, b)});
                        expect_close(y, out, ref, 1e-5, 1e-5);
                        EXPECT_TRUE(same_bits(y, run(*op, {tensor(as, a), tensor(bs, b)}, 3)));
                    }
}

TEST(MatMul, NcnnOutputShapesForVectors)
{
    auto op = make_op("MatMul", ParamDict());
    EXPECT_EQ(infer_shape(*op, {{4}, {4}}), (Shape{1}));
    EXPECT_EQ(infer_shape(*op, {{4}, {4, 6}}), (Shape{6}));
    EXPECT_EQ(infer_shape(*op, {{3, 4}, {4}}), (Shape{3}));
    EXPECT_EQ(infer_shape(*op, {{4}, {7, 4, 6}}), (Shape{7, 6}));
    EXPECT_EQ(infer_shape(*op, {{2, 7, 3, 4}, {4}}), (Shape{2, 7, 3}));
    EXPECT_EQ(infer_shape(*op, {{7, 3, 4}, {2, 1, 4, 6}}), (Shape{2, 7, 3, 6}));
    auto tb = make_op("MatMul", params({{0, 1}}));
    EXPECT_EQ(infer_shape(*tb, {{3, 4}, {4}}), (Shape{3})); // a vector B is never transposed
    EXPECT_EQ(infer_shape(*tb, {{12, 3, 4}, {12, 6, 4}}), (Shape{12, 3, 6}));
}

TEST(MatMul, Errors)
{
    auto op = make_op("MatMul", ParamDict());
    EXPECT_ERROR(make_op("MatMul", params({{0, 2}})), "transB");
    EXPECT_ERROR(infer_shape(*op, {{3, 4}, {5, 6}}), "K of A");
    EXPECT_ERROR(infer_shape(*op, {{2, 3, 4}, {3, 4, 5}}), "do not broadcast");
    EXPECT_ERROR(infer_shape(*op, {{2, 1, 3, 4}, {3, 3, 1, 4, 5}}), "do not broadcast");
    EXPECT_ERROR(infer_shape(*op, {{3, 4}}), "input");
}

// =============================================================================
// MultiHeadAttention
// =============================================================================

namespace {

struct MhaWeights {
    int64_t E, qdim, kdim, vdim;
    std::vector<float> qw, qb, kw, kb, vw, vb, ow, ob;
    std::vector<Tensor> tensors() const
    {
        return {tensor({E, qdim}, qw), tensor({E}, qb), tensor({E, kdim}, kw), tensor({E}, kb),
                tensor({E, vdim}, vw), tensor({E}, vb), tensor({qdim, E}, ow), tensor({qdim}, ob)};
    }
};

MhaWeights mha_weights(int64_t E, int64_t qdim, int64_t kdim, int64_t vdim)
{
    MhaWeights w{E, qdim, kdim, vdim, randv(E * qdim, -0.3f, 0.3f), randv(E), randv(E * kdim, -0.3f, 0.3f), randv(E),
                 randv(E * vdim, -0.3f, 0.3f), randv(E), randv(qdim * E, -0.3f, 0.3f), randv(qdim)};
    return w;
}

// rows x W^T + b, W is [out][in].
std::vector<double> linear(const std::vector<double>& x, int64_t rows, int64_t in, const std::vector<float>& W,
                           const std::vector<float>& b, int64_t out)
{
    std::vector<double> y(rows * out);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t o = 0; o < out; ++o) {
            double s = b[o];
            for (int64_t i = 0; i < in; ++i) s += x[r * in + i] * W[o * in + i];
            y[r * out + o] = s;
        }
    return y;
}

std::vector<double> to_d(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// Attention with already projected K, V rows (dst, E). mask: (src, dst) or (H, src, dst) or empty.
std::vector<double> ref_attention(const std::vector<double>& Q, const std::vector<double>& Kp,
                                  const std::vector<double>& Vp, int64_t src, int64_t dst, int64_t E, int64_t H,
                                  const std::vector<float>& mask, bool mask_per_head)
{
    const int64_t D = E / H;
    std::vector<double> O(src * E, 0.0);
    for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < src; ++i) {
            std::vector<double> s(dst);
            double mx = -INFINITY;
            for (int64_t j = 0; j < dst; ++j) {
                double v = 0;
                for (int64_t d = 0; d < D; ++d) v += Q[i * E + h * D + d] * Kp[j * E + h * D + d];
                if (!mask.empty()) v += mask[(mask_per_head ? h * src * dst : 0) + i * dst + j];
                s[j] = v;
                mx = std::max(mx, v);
            }
            double sum = 0;
            for (auto& v : s) sum += (v = std::exp(v - mx));
            for (int64_t j = 0; j < dst; ++j)
                for (int64_t d = 0; d < D; ++d) O[i * E + h * D + d] += s[j] / sum * Vp[j * E + h * D + d];
        }
    return O;
}

std::vector<double> ref_mha(const MhaWeights& w, int64_t H, double scale, const std::vector<float>& q, int64_t src,
                            const std::vector<float>& k, const std::vector<float>& v, int64_t cur,
                            const std::vector<float>& mask, bool mask_per_head)
{
    auto Q = linear(to_d(q), src, w.qdim, w.qw, w.qb, w.E);
    for (auto& x : Q) x *= scale;
    const auto Kp = linear(to_d(k), cur, w.kdim, w.kw, w.kb, w.E);
    const auto Vp = linear(to_d(v), cur, w.vdim, w.vw, w.vb, w.E);
    const auto O = ref_attention(Q, Kp, Vp, src, cur, w.E, H, mask, mask_per_head);
    return linear(O, src, w.E, w.ow, w.ob, w.qdim);
}

} // namespace

TEST(Attention, SelfCrossAndSeparateKVWithMasks)
{
    const int64_t E = 12, H = 3, src = 5, cur = 7;
    for (int inputs = 1; inputs <= 3; ++inputs)
        for (int mask_kind = 0; mask_kind < 3; ++mask_kind) { // none, 2-D, per head 3-D
            SCOPED_TRACE("inputs " + std::to_string(inputs) + " mask " + std::to_string(mask_kind));
            const int64_t qdim = inputs == 1 ? 8 : 10;
            const int64_t kdim = inputs == 1 ? qdim : 6, vdim = inputs == 3 ? 9 : kdim;
            const MhaWeights w = mha_weights(E, qdim, kdim, vdim);
            ParamDict pd = params({{0, E}, {1, H}, {2, E * qdim}});
            if (kdim != E) pd.set_int(3, static_cast<int>(kdim));
            if (vdim != E) pd.set_int(4, static_cast<int>(vdim));
            if (mask_kind) pd.set_int(5, 1);
            ListReader rec({});
            auto op = make_op("MultiHeadAttention", pd, w.tensors(), &rec);
            ASSERT_EQ(rec.asked.size(), 8u);
            for (size_t i = 0; i < 8; ++i)
                EXPECT_EQ(rec.asked[i].second, i % 2 == 0 ? WeightEncoding::Tagged : WeightEncoding::Raw) << i;
            const int64_t ksrc = inputs == 1 ? src : cur;
            const auto q = randv(src * qdim), k = inputs == 1 ? q : randv(ksrc * kdim);
            const auto v = inputs == 3 ? randv(ksrc * vdim) : k;
            std::vector<float> mask;
            if (mask_kind == 1) mask = randv(src * ksrc, -2.f, 0.f);
            if (mask_kind == 2) mask = randv(H * src * ksrc, -2.f, 0.f);
            std::vector<Tensor> in{tensor({src, qdim}, q)};
            if (inputs >= 2) in.push_back(tensor({ksrc, kdim}, k));
            if (inputs == 3) in.push_back(tensor({ksrc, vdim}, v));
            if (mask_kind == 1) in.push_back(tensor({src, ksrc}, mask));
            if (mask_kind == 2) in.push_back(tensor({H, src, ksrc}, mask));
            const auto ref = ref_mha(w, H, 1.0 / std::sqrt(double(E / H)), q, src, k, v, ksrc, mask, mask_kind == 2);
            const Tensor y = run(*op, in);
            expect_close(y, {src, qdim}, ref, 1e-5, 1e-4);
            EXPECT_TRUE(same_bits(y, run(*op, in, 3)));
        }
}

TEST(Attention, ExplicitScaleDefaultHeadsAndIntegerHeadDim)
{
    const int64_t E = 10, src = 4;
    const MhaWeights w = mha_weights(E, E, E, E);
    const auto q = randv(src * E);
    // num_heads defaults to 1; scale defaults to 1/sqrt(E) (integer E / heads)
    auto op = make_op("MultiHeadAttention", params({{0, E}, {2, E * E}}), w.tensors());
    expect_close(run(*op, {tensor({src, E}, q)}), {src, E}, ref_mha(w, 1, 1 / std::sqrt(10.0), q, src, q, q, src, {}, false),
                 1e-5, 1e-4);
    ParamDict pd = params({{0, E}, {1, 2}, {2, E * E}});
    pd.set_float(6, 0.3f);
    auto op2 = make_op("MultiHeadAttention", pd, w.tensors());
    expect_close(run(*op2, {tensor({src, E}, q)}), {src, E}, ref_mha(w, 2, 0.3, q, src, q, q, src, {}, false), 1e-5, 1e-4);
    // 1-D q is one row
    std::vector<float> q1(q.begin(), q.begin() + E);
    expect_close(run(*op2, {tensor({E}, q1)}), {1, E}, ref_mha(w, 2, 0.3, q1, 1, q1, q1, 1, {}, false), 1e-5, 1e-4);
}

TEST(Attention, KvCacheSelfAndCross)
{
    const int64_t E = 8, H = 2, src = 3, past = 4;
    const MhaWeights w = mha_weights(E, E, E, E);
    const double scale = 1 / std::sqrt(4.0);
    auto op = make_op("MultiHeadAttention", params({{0, E}, {1, H}, {2, E * E}, {7, 1}}), w.tensors());
    const auto x = randv(src * E), ck = randv(E * past), cv = randv(E * past);
    // cached (E, past) -> rows (past, E)
    auto rows_of = [&](const std::vector<float>& c, int64_t n) {
        std::vector<double> r(n * E);
        for (int64_t e = 0; e < E; ++e)
            for (int64_t j = 0; j < n; ++j) r[j * E + e] = c[e * n + j];
        return r;
    };
    auto cache_of = [&](const std::vector<double>& rows, int64_t n) {
        std::vector<double> c(E * n);
        for (int64_t e = 0; e < E; ++e)
            for (int64_t j = 0; j < n; ++j) c[e * n + j] = rows[j * E + e];
        return c;
    };
    {
        // Self attention: new keys appended after the cached ones.
        const auto outs = run_all(*op, {tensor({src, E}, x), tensor({E, past}, ck), tensor({E, past}, cv)}, 1, 3);
        auto Q = linear(to_d(x), src, E, w.qw, w.qb, E);
        for (auto& v : Q) v *= scale;
        auto K = rows_of(ck, past), V = rows_of(cv, past);
        const auto Kn = linear(to_d(x), src, E, w.kw, w.kb, E), Vn = linear(to_d(x), src, E, w.vw, w.vb, E);
        K.insert(K.end(), Kn.begin(), Kn.end());
        V.insert(V.end(), Vn.begin(), Vn.end());
        const auto O = ref_attention(Q, K, V, src, past + src, E, H, {}, false);
        expect_close(outs[0], {src, E}, linear(O, src, E, w.ow, w.ob, E), 1e-5, 1e-4);
        expect_close(outs[1], {E, past + src}, cache_of(K, past + src), 1e-5, 1e-5);
        expect_close(outs[2], {E, past + src}, cache_of(V, past + src), 1e-5, 1e-5);
    }
    {
        // Cross attention with a cache: k/v inputs are ignored, the cache is used as is.
        const auto kv = randv(6 * E);
        const auto outs =
            run_all(*op, {tensor({src, E}, x), tensor({6, E}, kv), tensor({E, past}, ck), tensor({E, past}, cv)}, 1, 3);
        auto Q = linear(to_d(x), src, E, w.qw, w.qb, E);
        for (auto& v : Q) v *= scale;
        const auto O = ref_attention(Q, rows_of(ck, past), rows_of(cv, past), src, past, E, H, {}, false);
        expect_close(outs[0], {src, E}, linear(O, src, E, w.ow, w.ob, E), 1e-5, 1e-4);
        expect_close(outs[1], {E, past}, to_d(ck), 0, 0);
        expect_close(outs[2], {E, past}, to_d(cv), 0, 0);
    }
    {
        // Empty cache: plain attention, caches out are the projections.
        const auto outs = run_all(*op, {tensor({src, E}, x), tensor({E, 0}, {}), tensor({E, 0}, {})}, 1, 3);
        expect_close(outs[0], {src, E}, ref_mha(w, H, scale, x, src, x, x, src, {}, false), 1e-5, 1e-4);
        expect_close(outs[1], {E, src}, cache_of(linear(to_d(x), src, E, w.kw, w.kb, E), src), 1e-5, 1e-5);
    }
}

TEST(Attention, Errors)
{
    EXPECT_ERROR(make_op("MultiHeadAttention", params({{0, 10}, {1, 3}, {2, 100}})), "multiple of num_heads");
    EXPECT_ERROR(make_op("MultiHeadAttention", params({{0, 10}, {2, 95}})), "weight_data_size");
    EXPECT_ERROR(make_op("MultiHeadAttention", params({{0, 10}, {2, 100}, {18, 1}})), "quantize_term");
    EXPECT_ERROR(make_op("MultiHeadAttention", params({{2, 100}})), "embed_dim");
    EXPECT_ERROR(make_op("MultiHeadAttention", params({{0, 4}, {2, 16}, {7, 2}})), "kv_cache");
    const MhaWeights w = mha_weights(4, 4, 4, 4);
    auto op = make_op("MultiHeadAttention", params({{0, 4}, {1, 2}, {2, 16}}), w.tensors());
    EXPECT_ERROR(infer_shape(*op, {{3, 5}}), "q ");
    EXPECT_ERROR(infer_shape(*op, {{3, 4}, {2, 4}, {3, 4}}), "same number of rows");
    EXPECT_ERROR(infer_shape(*op, {{3, 4}, {2, 4}, {2, 4}, {2, 4}}), "inputs");
    EXPECT_ERROR(infer_shape(*op, {{2, 3, 4}}), "1-D or 2-D");
    auto masked = make_op("MultiHeadAttention", params({{0, 4}, {1, 2}, {2, 16}, {5, 1}}), w.tensors());
    EXPECT_ERROR(infer_shape(*masked, {{3, 4}, {3, 4}}), "attn_mask");
    EXPECT_ERROR(infer_shape(*masked, {{3, 4}, {3, 3, 3}}), "attn_mask");
    EXPECT_ERROR(infer_shape(*masked, {{3, 4}}), "inputs");
    auto cached = make_op("MultiHeadAttention", params({{0, 4}, {1, 2}, {2, 16}, {7, 1}}), w.tensors());
    EXPECT_ERROR(infer_shape(*cached, {{3, 4}, {5, 2}, {4, 2}}, 3), "cached k");
    EXPECT_ERROR(infer_shape(*cached, {{3, 4}, {4, 2}, {4, 3}}, 3), "cached v");
    EXPECT_ERROR(infer_shape(*cached, {{3, 4}, {4, 2}, {4, 2}}, 1), "output");
}

// =============================================================================
// Interp
// =============================================================================

namespace {

// PyTorch-style reference for one axis: source taps and weights.
struct Tap {
    std::vector<int64_t> idx;
    std::vector<double> w;
};

Tap ref_tap(int type, int64_t in, int64_t out, int64_t dx, bool align)
{
    double src;
    if (align) src = out > 1 ? dx * double(in - 1) / double(out - 1) : 0.0;
    else src = (dx + 0.5) * double(in) / double(out) - 0.5;
    Tap t;
    auto clampi = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in - 1); };
    if (type == 2) {
        if (src < 0) src = 0;
        const int64_t i0 = static_cast<int64_t>(std::floor(src));
        const double l = src - i0;
        t.idx = {clampi(i0), clampi(i0 + 1)};
        t.w = {1 - l, l};
        return t;
    }
    // bicubic, A = -0.75, taps clamped to the border
    const double A = -0.75;
    const int64_t i0 = static_cast<int64_t>(std::floor(src));
    const double f = src - i0;
    auto k = [&](double x) {
        x = std::fabs(x);
        if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
        if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
        return 0.0;
    };
    for (int m = -1; m <= 2; ++m) {
        t.idx.push_back(clampi(i0 + m));
        t.w.push_back(k(m - f));
    }
    return t;
}

// Resizes (c, h, w) to (c, oh, ow); nearest uses index = min(int(dst * s), in - 1) in float.
std::vector<double> ref_resize(int type, const std::vector<float>& x, int64_t c, int64_t h, int64_t w, int64_t oh,
                               int64_t ow, bool align, float hs, float ws)
{
    std::vector<double> y;
    for (int64_t q = 0; q < c; ++q)
        for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
                const float* p = x.data() + q * h * w;
                if (type == 1) {
                    const int64_t si = std::min<int64_t>(static_cast<int64_t>(static_cast<float>(i) * hs), h - 1);
                    const int64_t sj = std::min<int64_t>(static_cast<int64_t>(static_cast<float>(j) * ws), w - 1);
                    y.push_back(p[si * w + sj]);
                    continue;
                }
                const Tap ty = oh == h && h == 1 ? Tap{{0}, {1.0}} : ref_tap(type, h, oh, i, align);
                const Tap tx = ref_tap(type, w, ow, j, align);
                double v = 0;
                for (size_t a = 0; a < ty.idx.size(); ++a)
                    for (size_t b = 0; b < tx.idx.size(); ++b) v += ty.w[a] * tx.w[b] * p[ty.idx[a] * w + tx.idx[b]];
                y.push_back(v);
            }
    return y;
}

} // namespace

TEST(Interp, EveryTypeFromScaleAndFromSize)
{
    const int64_t c = 3, h = 5, w = 6;
    const auto x = randv(c * h * w);
    struct Case {
        float hsc, wsc;
        int oh, ow; // params 3/4 (0 = from scale)
    };
    const std::vector<Case> cases = {{2.f, 2.f, 0, 0}, {0.5f, 0.5f, 0, 0}, {1.5f, 0.7f, 0, 0}, {1.f, 1.f, 9, 4},
                                     {1.f, 1.f, 3, 11}, {1.f, 1.f, 1, 1},   {3.f, 1.f, 0, 0}};
    for (int type = 1; type <= 3; ++type)
        for (int align = 0; align < 2; ++align)
            for (const Case& k : cases) {
                SCOPED_TRACE(::testing::Message() << "type " << type << " align " << align << " scale " << k.hsc << "x"
                                                  << k.wsc << " size " << k.oh << "x" << k.ow);
                ParamDict pd = params({{0, type}, {6, align}});
                pd.set_float(1, k.hsc);
                pd.set_float(2, k.wsc);
                if (k.oh) pd.set_int(3, k.oh);
                if (k.ow) pd.set_int(4, k.ow);
                auto op = make_op("Interp", pd);
                const int64_t oh = k.oh ? k.oh : static_cast<int64_t>(h * k.hsc);
                const int64_t ow = k.ow ? k.ow : static_cast<int64_t>(w * k.wsc);
                const float hs = k.oh ? float(h) / float(oh) : 1.f / k.hsc, ws = k.ow ? float(w) / float(ow) : 1.f / k.wsc;
                const Tensor y = run(*op, {tensor({c, h, w}, x)});
                expect_close(y, {c, oh, ow}, ref_resize(type, x, c, h, w, oh, ow, align, hs, ws), 1e-5, 1e-5);
                EXPECT_TRUE(same_bits(y, run(*op, {tensor({c, h, w}, x)}, 3)));
            }
}

TEST(Interp, NearestUsesInverseScaleWhenSizeComesFromScale)
{
    // w=10, scale 0.45: outw = int(4.5) = 4; ncnn steps by 1/scale = 2.22 (0,2,4,6),
    // not by w/outw = 2.5 (0,2,5,7). scale 1.55: outw = 15, 0.645 vs 0.667.
    const auto x = randv(10);
    for (float s : {0.45f, 1.55f, 2.5f, 0.3f}) {
        ParamDict pd = params({{0, 1}});
        pd.set_float(1, 1.f);
        pd.set_float(2, s);
        auto op = make_op("Interp", pd);
        const int64_t ow = static_cast<int64_t>(10 * s);
        const auto ref = ref_resize(1, x, 1, 1, 10, 1, ow, false, 1.f, 1.f / s);
        if (s == 0.45f || s == 1.55f) { // the rule matters here
            EXPECT_NE(ref, ref_resize(1, x, 1, 1, 10, 1, ow, false, 1.f, 10.f / float(ow)));
        }
        expect_close(run(*op, {tensor({1, 1, 10}, x)}), {1, 1, ow}, ref, 0, 0);
    }
    // With output_width given, the step is w/outw.
    auto sized = make_op("Interp", params({{0, 1}, {3, 1}, {4, 4}}));
    expect_close(run(*sized, {tensor({1, 1, 10}, x)}), {1, 1, 4}, ref_resize(1, x, 1, 1, 10, 1, 4, false, 1.f, 2.5f), 0, 0);
}

TEST(Interp, TwoDimResizesOnlyWidthAndOneDimFillsChannels)
{
    const auto x = randv(4 * 7);
    for (int type = 1; type <= 3; ++type) {
        ParamDict pd = params({{0, type}});
        pd.set_float(1, 3.f);
        pd.set_float(2, 2.f);
        auto op = make_op("Interp", pd);
        // (h=4, w=7) -> (4, 14): each row a 1-row image; height_scale ignored
        expect_close(run(*op, {tensor({4, 7}, x)}), {4, 14}, ref_resize(type, x, 4, 1, 7, 1, 14, false, 1.f, 0.5f), 1e-5,
                     1e-5);
        // 1-D of n values -> (n, int(1*3), int(1*2)), channel q filled with x[q]
        std::vector<double> ref;
        for (int q = 0; q < 5; ++q)
            for (int i = 0; i < 6; ++i) ref.push_back(x[q]);
        expect_close(run(*op, {tensor({5}, std::vector<float>(x.begin(), x.begin() + 5))}), {5, 3, 2}, ref, 0, 0);
    }
    // same size: a copy
    auto same = make_op("Interp", params({{0, 2}, {3, 4}, {4, 7}}));
    expect_close(run(*same, {tensor({1, 4, 7}, x)}), {1, 4, 7}, to_d(x), 0, 0);
    expect_close(run(*same, {tensor({4, 7}, x)}), {4, 7}, to_d(x), 0, 0);
}

TEST(Interp, DynamicTargetSizeAndExpressions)
{
    const int64_t c = 2, h = 4, w = 5;
    const auto x = randv(c * h * w);
    for (int type = 1; type <= 3; ++type) {
        // size from input 1's (w, h)
        auto dyn = make_op("Interp", params({{0, type}, {5, 1}}));
        expect_close(run(*dyn, {tensor({c, h, w}, x), rand_tensor({3, 7, 9})}), {c, 7, 9},
                     ref_resize(type, x, c, h, w, 7, 9, false, float(h) / 7, float(w) / 9), 1e-5, 1e-5);
        // expression referencing input 0 only: one input
        ParamDict pd = params({{0, type}});
        pd.set_string(9, "*(0w,2),+(0h,3)");
        auto e1 = make_op("Interp", pd);
        expect_close(run(*e1, {tensor({c, h, w}, x)}), {c, 7, 10},
                     ref_resize(type, x, c, h, w, 7, 10, false, float(h) / 7, float(w) / 10), 1e-5, 1e-5);
        // expression referencing input 1: two inputs; one value keeps h
        ParamDict pd2 = params({{0, type}});
        pd2.set_string(9, "1w");
        auto e2 = make_op("Interp", pd2);
        expect_close(run(*e2, {tensor({c, h, w}, x), rand_tensor({8})}), {c, h, 8},
                     ref_resize(type, x, c, h, w, h, 8, false, 1.f, float(w) / 8), 1e-5, 1e-5);
    }
}

TEST(Interp, ZooFormThroughParamText)
{
    Net net;
    net.load_param_mem("7767517\n3 3\nInput in 0 1 x\nInterp up 1 1 x y 0=1 1=2.000000e+00 2=2.000000e+00\n"
                       "Interp down 1 1 y z 0=2 1=5.000000e-01 2=5.000000e-01\n");
    Session s(net);
    const auto x = randv(3 * 4 * 5);
    s.set_input("x", tensor({3, 4, 5}, x));
    const Tensor y = s.get("y");
    expect_close(y, {3, 8, 10}, ref_resize(1, x, 3, 4, 5, 8, 10, false, 0.5f, 0.5f), 0, 0);
    // 2x nearest then bilinear half: each output averages a 2x2 block of equal values
    expect_close(s.get("z"), {3, 4, 5}, to_d(x), 1e-6, 1e-6);
}

TEST(Interp, Errors)
{
    EXPECT_ERROR(make_op("Interp", ParamDict()), "resize_type");
    EXPECT_ERROR(make_op("Interp", params({{0, 5}})), "resize_type");
    EXPECT_ERROR(make_op("Interp", params({{0, 4}, {7, 8}})), "filter (param 7) must be 0-7");
    EXPECT_ERROR(make_op("Interp", params({{0, 4}, {6, 1}})), "align_corner (param 6) does not apply");
    EXPECT_ERROR(make_op("Interp", params({{20, 1}, {0, 4}})), "resize_type"); // ONNX's modes are only 1-3
    EXPECT_ERROR(make_op("Interp", params({{0, 1}, {5, 2}})), "dynamic_target_size");
    EXPECT_ERROR(make_op("Interp", params({{0, 1}, {6, 2}})), "align_corner");
    ParamDict neg = params({{0, 1}});
    neg.set_float(1, -2.f);
    EXPECT_ERROR(make_op("Interp", neg), "scale");
    ParamDict bad_expr = params({{0, 1}});
    bad_expr.set_string(9, "+(0w");
    EXPECT_NE(error_of([&] { make_op("Interp", bad_expr); }), "no error");
    auto op = make_op("Interp", params({{0, 2}}));
    EXPECT_ERROR(infer_shape(*op, {{1, 2, 3, 4}}), "rank 1-3");
    ParamDict small = params({{0, 2}});
    small.set_float(2, 0.1f);
    auto op2 = make_op("Interp", small);
    EXPECT_ERROR(infer_shape(*op2, {{1, 4, 5}}), "must be positive");
    ParamDict three = params({{0, 2}});
    three.set_string(9, "1,2,3");
    auto op3 = make_op("Interp", three);
    EXPECT_ERROR(infer_shape(*op3, {{1, 4, 5}}), "gives 3 values");
    auto dyn = make_op("Interp", params({{0, 1}, {5, 1}}));
    EXPECT_ERROR(infer_shape(*dyn, {{1, 4, 5}}), "input");
}

// =============================================================================
// Registration, param text and the vision_transformer zoo model
// =============================================================================

TEST(MathOps, AllRegisteredUnderNcnnNames)
{
    const auto types = registered_op_types();
    for (const char* t : {"Softmax", "LayerNorm", "BatchNorm", "Scale", "LRN", "Reduction", "Gemm", "MatMul",
                          "MultiHeadAttention", "Interp"})
        EXPECT_NE(std::find(types.begin(), types.end(), t), types.end()) << t;
}

namespace {

std::string read_text(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void put_u32(std::vector<uint8_t>& out, uint32_t v)
{
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_floats(std::vector<uint8_t>& out, const std::vector<float>& v)
{
    for (float f : v) {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        put_u32(out, u);
    }
}
void put_tagged(std::vector<uint8_t>& out, const std::vector<float>& v)
{
    put_u32(out, 0); // fp32 tag
    put_floats(out, v);
}

std::vector<double> ref_ln_rows(const std::vector<double>& x, int64_t rows, int64_t n, const std::vector<float>& g,
                                const std::vector<float>& b, double eps)
{
    std::vector<float> xf(x.begin(), x.end());
    (void)rows;
    return ref_layer_norm(xf, n, eps, &g, &b);
}

} // namespace

TEST(MathOps, VisionTransformerBlockFromZooParam)
{
    // One encoder block, cut verbatim from the zoo model (Split .. Add_27), fed by an Input.
    const std::string zoo = read_text(std::string(KESTREL_SHARED_DIR) + "/zoo/vision_transformer.param");
    ASSERT_FALSE(zoo.empty());
    const std::vector<std::string> names = {"splitncnn_0", "LayerNorm_12", "splitncnn_1", "MultiHeadAttention_21",
                                            "Add_22",      "splitncnn_2",  "LayerNorm_23", "Gemm_24",
                                            "Gelu_25",     "Gemm_26",      "Add_27"};
    std::map<std::string, std::string> lines;
    std::istringstream zs(zoo);
    for (std::string line; std::getline(zs, line);) {
        std::istringstream ls(line);
        std::string type, name;
        ls >> type >> name;
        if (std::find(names.begin(), names.end(), name) != names.end()) lines[name] = line;
    }
    ASSERT_EQ(lines.size(), names.size());
    std::string param = "7767517\n12 40\nInput input 0 1 input.1\n";
    for (const auto& n : names) param += lines[n] + "\n";

    const int64_t E = 768, F = 3072, seq = 5;
    const auto g1 = randv(E, 0.5f, 1.5f), b1 = randv(E, -0.2f, 0.2f), g2 = randv(E, 0.5f, 1.5f), b2 = randv(E, -0.2f, 0.2f);
    const MhaWeights w = [&] {
        MhaWeights m{E, E, E, E, randv(E * E, -0.05f, 0.05f), randv(E, -0.1f, 0.1f), randv(E * E, -0.05f, 0.05f),
                     randv(E, -0.1f, 0.1f), randv(E * E, -0.05f, 0.05f), randv(E, -0.1f, 0.1f),
                     randv(E * E, -0.05f, 0.05f), randv(E, -0.1f, 0.1f)};
        return m;
    }();
    const auto W1 = randv(F * E, -0.05f, 0.05f), c1 = randv(F, -0.1f, 0.1f);
    const auto W2 = randv(E * F, -0.03f, 0.03f), c2 = randv(E, -0.1f, 0.1f);
    std::vector<uint8_t> bin;
    put_floats(bin, g1);
    put_floats(bin, b1);
    put_tagged(bin, w.qw);
    put_floats(bin, w.qb);
    put_tagged(bin, w.kw);
    put_floats(bin, w.kb);
    put_tagged(bin, w.vw);
    put_floats(bin, w.vb);
    put_tagged(bin, w.ow);
    put_floats(bin, w.ob);
    put_floats(bin, g2);
    put_floats(bin, b2);
    put_tagged(bin, W1);
    put_tagged(bin, c1);
    put_tagged(bin, W2);
    put_tagged(bin, c2);

    Net net;
    net.load_param_mem(param, "vit_block");
    net.load_model_mem(bin.data(), bin.size(), "vit_block.bin");
    Options opt;
    opt.threads = 2;
    Session s(net, opt);
    const auto x = randv(seq * E);
    s.set_input("input.1", tensor({seq, E}, x));
    const Tensor y = s.get("input.16");

    // Reference: x1 = x + MHA(LN1(x)); out = x1 + W2 gelu_tanh(W1 LN2(x1) + c1) + c2.
    const auto xd = to_d(x);
    const auto l1 = ref_ln_rows(xd, seq, E, g1, b1, 1e-6);
    const std::vector<float> l1f(l1.begin(), l1.end());
    const auto attn = ref_mha(w, 12, 1 / std::sqrt(64.0), l1f, seq, l1f, l1f, seq, {}, false);
    std::vector<double> x1(seq * E);
    for (size_t i = 0; i < x1.size(); ++i) x1[i] = xd[i] + attn[i];
    const auto l2 = ref_ln_rows(x1, seq, E, g2, b2, 1e-6);
    auto hdn = linear(l2, seq, E, W1, c1, F);
    for (auto& v : hdn) v = 0.5 * v * (1 + std::tanh(std::sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
    const auto o = linear(hdn, seq, F, W2, c2, E);
    std::vector<double> ref(seq * E);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] = x1[i] + o[i];
    expect_close(y, {seq, E}, ref, 2e-4, 2e-4);
}

TEST(MathOps, VisionTransformerZooModelShapes)
{
    Net net;
    const std::string msg = error_of([&] { net.load_param(std::string(KESTREL_SHARED_DIR) + "/zoo/vision_transformer.param"); });
    if (msg.find("unknown layer type") != std::string::npos) GTEST_SKIP() << "layers of other families missing: " << msg;
    ASSERT_EQ(msg, "no error");
    net.load_model_zeros();
    std::map<std::string, TensorDesc> in;
    in["input"] = desc({3, 384, 384});
    const ModelReport r = analyze_model(net, in);
    ASSERT_FALSE(r.layers.empty());
    const auto& g = net.graph();
    (void)g;
    const TensorDesc& last = r.layers.back().outputs[0];
    EXPECT_EQ(last.shape, (Shape{1, 1000}));
    int mha = 0, gemm = 0;
    for (const auto& l : r.layers) {
        for (const auto& o : l.outputs)
            if (o.shape == Shape{145, 768}) ++mha;
        if (l.macs == 145LL * 768 * 3072) ++gemm;
    }
    EXPECT_GT(mha, 0);
    EXPECT_EQ(gemm, 24);
}
