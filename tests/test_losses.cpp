// Softmax family (LogSoftmax, Hardmax and the importer's opset < 13 forms of
// Softmax/LogSoftmax/Hardmax), NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss, Dropout (ONNX form), the window layers, ReverseSequence and
// Det. Every expectation comes from a naive reference written here from the
// ONNX operator spec (coordinates decoded one element at a time, sums in
// plain loops, determinants by cofactor expansion) or from values worked out
// by hand; never from the layers' own code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kestrel/kestrel.h"
#include "layer_test_util.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#include "onnx/onnx_pb.h"
#endif

using namespace kestrel;

namespace {

using kestrel::layer_test::error_of;

// ---- helpers ----------------------------------------------------------------------

#define EXPECT_ERROR_WITH(statement, part)                                                                  \
    do {                                                                                                    \
        const std::string message_ = error_of([&] { statement; });                                         \
        EXPECT_NE(message_.find(part), std::string::npos) << "message: '" << message_ << "'";              \
    } while (0)

Tensor floats(const Shape& s, const std::vector<double>& v, DType t = DType::F32)
{
    Tensor f64(s, DType::F64);
    EXPECT_EQ(static_cast<int64_t>(v.size()), f64.numel());
    for (size_t i = 0; i < v.size(); ++i) f64.data<double>()[i] = v[i];
    return f64.to(t);
}

Tensor ints(const Shape& s, const std::vector<int64_t>& v, DType t = DType::I64)
{
    Tensor i64(s, DType::I64);
    EXPECT_EQ(static_cast<int64_t>(v.size()), i64.numel());
    for (size_t i = 0; i < v.size(); ++i) i64.data<int64_t>()[i] = v[i];
    return i64.to(t);
}

Tensor random_floats(const Shape& s, unsigned seed, double lo = -3, double hi = 3, DType t = DType::F32)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(static_cast<size_t>(shape_numel(s)));
    for (double& x : v) x = dist(rng);
    return floats(s, v, t);
}

std::vector<double> as_doubles(const Tensor& t)
{
    const Tensor d = t.to(DType::F64);
    return std::vector<double>(d.data<double>(), d.data<double>() + d.numel());
}

void expect_near_all(const Tensor& got, const Shape& shape, const std::vector<double>& want, double tol)
{
    ASSERT_EQ(got.shape(), shape);
    const std::vector<double> g = as_doubles(got);
    ASSERT_EQ(g.size(), want.size());
    for (size_t i = 0; i < g.size(); ++i) {
        if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(g[i])) << "element " << i;
        else EXPECT_NEAR(g[i], want[i], tol) << "element " << i;
    }
}

std::vector<int64_t> coords_of(int64_t flat, const Shape& s)
{
    std::vector<int64_t> c(s.size());
    for (int k = static_cast<int>(s.size()) - 1; k >= 0; --k) {
        c[static_cast<size_t>(k)] = flat % s[static_cast<size_t>(k)];
        flat /= s[static_cast<size_t>(k)];
    }
    return c;
}

int64_t flat_of(const std::vector<int64_t>& c, const Shape& s)
{
    int64_t f = 0;
    for (size_t k = 0; k < s.size(); ++k) f = f * s[k] + c[k];
    return f;
}

// Runs one layer; inputs named in0.. are fed at run time unless `constants`
// marks them (then they are Constant layers, known while planning).
std::vector<Tensor> run(const std::string& type, const ParamDict& pd, const std::vector<Tensor>& inputs,
                        int outputs = 1, const std::vector<bool>& constants = {})
{
    Net net;
    std::vector<std::string> bottoms, tops;
    for (size_t i = 0; i < inputs.size(); ++i) {
        bottoms.push_back("in" + std::to_string(i));
        if (i < constants.size() && constants[i]) {
            ParamDict cpd;
            cpd.set_int(0, static_cast<int>(inputs[i].dtype()));
            if (inputs[i].rank() > 0) cpd.set_ints(1, std::vector<int>(inputs[i].shape().begin(), inputs[i].shape().end()));
            net.add_layer("Constant", bottoms.back(), {}, {bottoms.back()}, cpd, {inputs[i]});
        } else {
            net.add_layer("Input", bottoms.back(), {}, {bottoms.back()});
        }
    }
    for (int i = 0; i < outputs; ++i) tops.push_back("out" + std::to_string(i));
    net.add_layer(type, "layer", bottoms, tops, pd);
    net.finish_graph();
    Session session(net);
    for (size_t i = 0; i < inputs.size(); ++i)
        if (!(i < constants.size() && constants[i])) session.set_input(bottoms[i], inputs[i]);
    return session.run(tops);
}

ParamDict params(std::initializer_list<std::pair<int, int>> kv)
{
    ParamDict pd;
    for (const auto& [k, v] : kv) pd.set_int(k, v);
    return pd;
}

// ---- references ---------------------------------------------------------------------

// The elements of x's lane through `flat` along `axis`: flat indices of the coordinates
// equal to flat's except on the axis.
std::vector<int64_t> lane_through(int64_t flat, const Shape& s, int axis)
{
    std::vector<int64_t> c = coords_of(flat, s);
    std::vector<int64_t> lane;
    for (int64_t k = 0; k < s[static_cast<size_t>(axis)]; ++k) {
        c[static_cast<size_t>(axis)] = k;
        lane.push_back(flat_of(c, s));
    }
    return lane;
}

// log(softmax) of element i over the elements `group`.
double ref_log_softmax(const std::vector<double>& x, int64_t i, const std::vector<int64_t>& group)
{
    double sum = 0;
    for (int64_t j : group) sum += std::exp(x[static_cast<size_t>(j)]);
    return x[static_cast<size_t>(i)] - std::log(sum);
}

// 1 when element i is the first maximum of `group`.
double ref_hardmax(const std::vector<double>& x, int64_t i, const std::vector<int64_t>& group)
{
    int64_t first = group[0];
    for (int64_t j : group)
        if (x[static_cast<size_t>(j)] > x[static_cast<size_t>(first)]) first = j;
    return first == i ? 1.0 : 0.0;
}

using GroupRef = double (*)(const std::vector<double>&, int64_t, const std::vector<int64_t>&);

// Reference along one axis (opset 13 semantics).
std::vector<double> ref_along_axis(GroupRef f, const Tensor& x, int axis)
{
    const std::vector<double> v = as_doubles(x);
    if (axis < 0) axis += x.rank();
    std::vector<double> y(v.size());
    for (int64_t i = 0; i < x.numel(); ++i) y[static_cast<size_t>(i)] = f(v, i, lane_through(i, x.shape(), axis));
    return y;
}

// Reference over the input coerced to 2-D at `axis` (opset < 13): the group of element i
// is every element sharing its coordinates before `axis`.
std::vector<double> ref_coerced(GroupRef f, const Tensor& x, int axis)
{
    const std::vector<double> v = as_doubles(x);
    if (axis < 0) axis += x.rank();
    std::vector<double> y(v.size());
    for (int64_t i = 0; i < x.numel(); ++i) {
        const std::vector<int64_t> ci = coords_of(i, x.shape());
        std::vector<int64_t> group;
        for (int64_t j = 0; j < x.numel(); ++j) {
            const std::vector<int64_t> cj = coords_of(j, x.shape());
            if (std::equal(ci.begin(), ci.begin() + axis, cj.begin())) group.push_back(j);
        }
        y[static_cast<size_t>(i)] = f(v, i, group);
    }
    return y;
}

double ref_softmax(const std::vector<double>& x, int64_t i, const std::vector<int64_t>& group)
{
    return std::exp(ref_log_softmax(x, i, group));
}

// NLL loss per sample (none) and the weight used, from the spec's formulas.
struct NllRef {
    std::vector<double> loss;
    double weight_sum = 0;
};

NllRef ref_nll(const Tensor& logp, const std::vector<int64_t>& target, const std::vector<double>& weight,
               const int64_t* ignore_index)
{
    const std::vector<double> x = as_doubles(logp);
    const Shape& s = logp.shape();
    Shape ts = s;
    ts.erase(ts.begin() + 1);
    NllRef r;
    for (int64_t i = 0; i < static_cast<int64_t>(target.size()); ++i) {
        const int64_t c = target[static_cast<size_t>(i)];
        if (ignore_index && c == *ignore_index) {
            r.loss.push_back(0);
            continue;
        }
        std::vector<int64_t> tc = coords_of(i, ts);
        tc.insert(tc.begin() + 1, c); // (n, d...) -> (n, c, d...)
        const double w = weight.empty() ? 1.0 : weight[static_cast<size_t>(c)];
        r.loss.push_back(-x[static_cast<size_t>(flat_of(tc, s))] * w);
        r.weight_sum += w;
    }
    return r;
}

double sum_of(const std::vector<double>& v)
{
    double s = 0;
    for (double x : v) s += x;
    return s;
}

// Determinant by cofactor expansion along the first row.
double ref_det(const std::vector<double>& a, size_t m)
{
    if (m == 0) return 1;
    if (m == 1) return a[0];
    double det = 0;
    for (size_t col = 0; col < m; ++col) {
        std::vector<double> minor;
        for (size_t r = 1; r < m; ++r)
            for (size_t c = 0; c < m; ++c)
                if (c != col) minor.push_back(a[r * m + c]);
        det += (col % 2 ? -1.0 : 1.0) * a[col] * ref_det(minor, m - 1);
    }
    return det;
}

// ---- LogSoftmax and Hardmax ---------------------------------------------------------------

TEST(LossesLogSoftmax, EveryAxisAndFloatDtypeMatchesTheFormula)
{
    for (DType t : {DType::F32, DType::F64, DType::F16}) {
        const Tensor x = random_floats({2, 3, 4}, 7, -3, 3, t);
        for (int axis = -3; axis <= 2; ++axis) {
            const Tensor y = run("LogSoftmax", params({{0, axis}}), {x})[0];
            EXPECT_EQ(y.dtype(), t);
            expect_near_all(y, x.shape(), ref_along_axis(ref_log_softmax, x, axis), t == DType::F16 ? 4e-3 : 1e-5);
        }
    }
}

TEST(LossesLogSoftmax, DefaultAxisIsLastAndLargeValuesStayFinite)
{
    const Tensor x = floats({2, 3}, {1000, 1001, 1002, -1000, 0, 1000});
    const Tensor y = run("LogSoftmax", {}, {x})[0];
    // log(softmax) = x - x_max - log(sum exp(x - x_max)), worked out per row.
    const double l = std::log(1 + std::exp(-1.0) + std::exp(-2.0));
    expect_near_all(y, {2, 3}, {-2 - l, -1 - l, -l, -2000, -1000, 0}, 1e-4);
}

TEST(LossesHardmax, FirstMaximumWinsAlongEveryAxis)
{
    // Many ties: integers 0..2 only.
    const Tensor x = floats({3, 2, 4}, {0, 2, 2, 1, 1, 1, 1, 1, 2, 0, 0, 2, 1, 2, 1, 0,
                                        2, 2, 0, 1, 0, 0, 0, 0});
    for (int axis = -3; axis <= 2; ++axis)
        expect_near_all(run("Hardmax", params({{0, axis}}), {x})[0], x.shape(), ref_along_axis(ref_hardmax, x, axis), 0);
    expect_near_all(run("Hardmax", {}, {floats({1, 4}, {3, 5, 5, 1})})[0], {1, 4}, {0, 1, 0, 0}, 0);
}

TEST(LossesSoftmaxAxis, RejectsBadAxisDtypeAndScalar)
{
    const Tensor x = random_floats({2, 3}, 1);
    for (const char* type : {"LogSoftmax", "Hardmax"}) {
        EXPECT_ERROR_WITH(run(type, params({{0, 2}}), {x}), "axis (param 0) 2 is out of range");
        EXPECT_ERROR_WITH(run(type, params({{0, -3}}), {x}), "out of range");
        EXPECT_ERROR_WITH(run(type, {}, {ints({2}, {1, 2})}), "must be a float tensor");
        EXPECT_ERROR_WITH(run(type, {}, {floats({}, {1})}), "rank >= 1");
    }
}

// ---- NegativeLogLikelihoodLoss ---------------------------------------------------------------

struct NllCase {
    Shape shape;             // (N, C, d...)
    std::vector<int64_t> target;
    std::vector<double> weight; // empty: no weight input
    bool has_ignore = false;
    int64_t ignore = 0;
};

TEST(LossesNll, ReductionsWeightsIgnoreIndexAndTargetDtypes)
{
    const std::vector<NllCase> cases = {
        {{3, 5}, {0, 4, 2}, {}},
        {{3, 5}, {0, 4, 2}, {0.5, 1, 2, 3, 0.25}},
        {{2, 3, 2}, {2, 0, 1, 1}, {}, true, 1},
        {{2, 3, 2}, {2, -1, -1, 1}, {1, 2, 3}, true, -1},
        {{2, 4, 2, 3}, {3, 0, 1, 2, 2, 1, 0, 0, 3, 3, 1, 2}, {0.1, 0.2, 0.3, 0.4}, true, 3},
        {{1, 2, 1, 1, 2}, {0, 1}, {}},
    };
    unsigned seed = 10;
    for (const NllCase& c : cases) {
        const Tensor x = random_floats(c.shape, seed++, -4, 0);
        Shape ts = c.shape;
        ts.erase(ts.begin() + 1);
        const NllRef ref = ref_nll(x, c.target, c.weight, c.has_ignore ? &c.ignore : nullptr);
        for (DType tt : {DType::I64, DType::I32}) {
            std::vector<Tensor> in = {x, ints(ts, c.target, tt)};
            if (!c.weight.empty()) in.push_back(floats({c.shape[1]}, c.weight));
            for (int reduction : {0, 1, 2}) {
                ParamDict pd = params({{0, reduction}});
                if (c.has_ignore) {
                    pd.set_int(1, 1);
                    pd.set_int(2, static_cast<int>(c.ignore));
                }
                const Tensor y = run("NegativeLogLikelihoodLoss", pd, in)[0];
                if (reduction == 0) expect_near_all(y, ts, ref.loss, 1e-5);
                if (reduction == 1) expect_near_all(y, {}, {sum_of(ref.loss)}, 1e-5);
                if (reduction == 2) expect_near_all(y, {}, {sum_of(ref.loss) / ref.weight_sum}, 1e-5);
            }
        }
    }
}

TEST(LossesNll, DefaultIsMeanAndAllIgnoredMeanIsNaN)
{
    const Tensor x = floats({2, 2}, {-1, -2, -3, -4});
    expect_near_all(run("NegativeLogLikelihoodLoss", {}, {x, ints({2}, {1, 0})})[0], {}, {(2.0 + 3.0) / 2}, 1e-6);
    const Tensor y = run("NegativeLogLikelihoodLoss", params({{1, 1}, {2, 0}}), {x, ints({2}, {0, 0})})[0];
    EXPECT_TRUE(std::isnan(as_doubles(y)[0]));
}

TEST(LossesNll, RejectsBadTargetsShapesAndParams)
{
    const Tensor x = random_floats({2, 3}, 3, -2, 0);
    EXPECT_ERROR_WITH(run("NegativeLogLikelihoodLoss", {}, {x, ints({2}, {0, 3})}), "target value 3 at index 1 is outside [0, 3)");
    EXPECT_ERROR_WITH(run("NegativeLogLikelihoodLoss", {}, {x, ints({2}, {-1, 0})}), "target value -1");
    // -1 is only accepted when it is the ignore_index.
    EXPECT_ERROR_WITH(run("NegativeLogLikelihoodLoss", params({{1, 1}, {2, -2}}), {x, ints({2}, {-1, 0})}), "target value -1");
    EXPECT_ERROR_WITH(run("NegativeLogLikelihoodLoss", {}, {x, ints({3}, {0, 0, 0})}), "target (input 1) must have shape (2,)");
    EXPECT_ERROR_WITH(run("NegativeLogLikelihoodLoss", {}, {x, floats({2}, {0, 0})}), "must be an integer tensor");
    EXPECT_ERROR_WITH(run("NegativeLogLikelihoodLoss", {}, {x, ints({2}, {0, 0}), floats({2}, {1, 1})}),
                      "weight (input 2) must have shape (3,)");
    EXPECT_ERROR_WITH(run("NegativeLogLikelihoodLoss", {}, {random_floats({3}, 1), ints({}, {0})}), "(N, C, d1..dk)");
    EXPECT_ERROR_WITH(run("NegativeLogLikelihoodLoss", params({{0, 3}}), {x, ints({2}, {0, 0})}), "reduction (param 0)");
}

// ---- Dropout (ONNX form) -------------------------------------------------------------------------------

Tensor bool_scalar(bool v)
{
    Tensor t(Shape{}, DType::Bool);
    *t.data<uint8_t>() = v ? 1 : 0;
    return t;
}

TEST(LossesDropout, PassesDataThroughWithAnAllTrueMask)
{
    const Tensor x = random_floats({2, 3}, 5);
    const std::vector<double> xv = as_doubles(x);
    for (const std::vector<Tensor>& in : std::vector<std::vector<Tensor>>{
             {x}, {x, floats({}, {0.3})}, {x, floats({}, {0.3}), bool_scalar(false)}, {x, floats({}, {0}), bool_scalar(true)}}) {
        for (bool constant : {false, true}) {
            const std::vector<Tensor> y = run("Dropout", params({{20, 1}}), in, 2, std::vector<bool>(in.size(), constant));
            expect_near_all(y[0], x.shape(), xv, 0);
            ASSERT_EQ(y[1].dtype(), DType::Bool);
            expect_near_all(y[1], x.shape(), std::vector<double>(6, 1.0), 0);
        }
    }
    const std::vector<Tensor> old = run("Dropout", params({{20, 1}, {21, static_cast<int>(DType::F32)}}), {x}, 2);
    ASSERT_EQ(old[1].dtype(), DType::F32);
    expect_near_all(old[1], x.shape(), std::vector<double>(6, 1.0), 0);
}

TEST(LossesDropout, TrainingWithARatioAndBadRatiosAreErrors)
{
    const Tensor x = random_floats({4}, 5);
    for (bool constant : {false, true}) {
        const std::vector<bool> c(3, constant);
        EXPECT_ERROR_WITH(run("Dropout", params({{20, 1}}), {x, floats({}, {0.5}), bool_scalar(true)}, 1, c), "training mode with ratio 0.5");
        EXPECT_ERROR_WITH(run("Dropout", params({{20, 1}}), {x, floats({}, {1.0})}, 1, c), "must be in [0, 1)");
        EXPECT_ERROR_WITH(run("Dropout", params({{20, 1}}), {x, floats({}, {-0.1})}, 1, c), "must be in [0, 1)");
    }
    EXPECT_ERROR_WITH(run("Dropout", params({{20, 1}}), {x, floats({}, {0}), floats({}, {1})}), "training_mode (input 2) must be bool");
    EXPECT_ERROR_WITH(run("Dropout", params({{20, 1}}), {x, floats({2}, {0, 0})}), "ratio (input 1) must hold one value");
}

// ---- windows ----------------------------------------------------------------------------------

TEST(LossesWindows, PeriodicAndSymmetricMatchTheFormulas)
{
    const double pi = std::acos(-1.0);
    struct Window {
        const char* type;
        std::function<double(double)> f; // of x = 2*pi*n/N
    };
    const std::vector<Window> windows = {
        {"HannWindow", [](double x) { return std::pow(std::sin(x / 2), 2); }}, // 0.5 - 0.5 cos x
        {"HammingWindow", [](double x) { return 0.54347826086956 - 0.45652173913043 * std::cos(x); }},
        {"BlackmanWindow", [](double x) { return 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x); }},
    };
    for (const Window& w : windows)
        for (int periodic : {1, 0})
            for (int64_t size : {int64_t{10}, int64_t{5}, int64_t{2}}) {
                const double period = static_cast<double>(periodic ? size : size - 1);
                std::vector<double> want;
                for (int64_t n = 0; n < size; ++n) want.push_back(w.f(2 * pi * static_cast<double>(n) / period));
                for (bool constant : {false, true}) {
                    const Tensor y = run(w.type, params({{0, periodic}, {20, 1}}), {ints({}, {size})}, 1, {constant})[0];
                    EXPECT_EQ(y.dtype(), DType::F32);
                    expect_near_all(y, {size}, want, 1e-6);
                }
            }
}

TEST(LossesWindows, DtypeLengthOneZeroAndErrors)
{
    const Tensor y = run("HannWindow", params({{1, static_cast<int>(DType::F64)}}), {ints({}, {4}, DType::I32)}, 1, {true})[0];
    EXPECT_EQ(y.dtype(), DType::F64);
    expect_near_all(y, {4}, {0, 0.5, 1, 0.5}, 1e-12);
    expect_near_all(run("BlackmanWindow", params({{0, 0}}), {ints({}, {1})}, 1, {true})[0], {1}, {1}, 0);
    expect_near_all(run("HammingWindow", {}, {ints({}, {0})}, 1, {true})[0], {0}, {}, 0);
    EXPECT_ERROR_WITH(run("HannWindow", {}, {ints({}, {-1})}, 1, {true}), "size (input 0) must be >= 0, got -1");
    EXPECT_ERROR_WITH(run("HannWindow", params({{20, 1}}), {ints({}, {-3})}), "must be >= 0, got -3");
    EXPECT_ERROR_WITH(run("HannWindow", {}, {floats({}, {3})}, 1, {true}), "must be an integer tensor");
    EXPECT_ERROR_WITH(run("HannWindow", {}, {ints({2}, {3, 3})}, 1, {true}), "must hold one value");
    EXPECT_ERROR_WITH(run("HannWindow", {}, {ints({}, {3})}), "must be known while planning");
}

// ---- ReverseSequence ----------------------------------------------------------------------------

TEST(LossesReverseSequence, BothAxisOrdersMatchTheSpec)
{
    for (DType t : {DType::F32, DType::I64, DType::U8}) {
        const Tensor x = floats({4, 3, 2}, [] {
            std::vector<double> v(24);
            for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
            return v;
        }()).to(t);
        for (int batch_axis : {0, 1}) {
            const int time_axis = 1 - batch_axis;
            const int64_t batches = x.shape()[static_cast<size_t>(batch_axis)];
            const int64_t steps = x.shape()[static_cast<size_t>(time_axis)];
            std::vector<int64_t> lens;
            for (int64_t b = 0; b < batches; ++b) lens.push_back((b * 2 + 1) % (steps + 1));
            // y[.., b, t, ..] = x[.., b, len-1-t, ..] for t < len, else x.
            const std::vector<double> xv = as_doubles(x);
            std::vector<double> want(xv.size());
            for (int64_t i = 0; i < x.numel(); ++i) {
                std::vector<int64_t> c = coords_of(i, x.shape());
                const int64_t len = lens[static_cast<size_t>(c[static_cast<size_t>(batch_axis)])];
                int64_t& step = c[static_cast<size_t>(time_axis)];
                if (step < len) step = len - 1 - step;
                want[static_cast<size_t>(i)] = xv[static_cast<size_t>(flat_of(c, x.shape()))];
            }
            const Tensor y = run("ReverseSequence", params({{0, batch_axis}, {1, time_axis}}),
                                 {x, ints({batches}, lens)})[0];
            EXPECT_EQ(y.dtype(), t);
            expect_near_all(y, x.shape(), want, 0);
        }
    }
}

TEST(LossesReverseSequence, RejectsBadLengthsAndAxes)
{
    const Tensor x = random_floats({2, 3}, 4);
    EXPECT_ERROR_WITH(run("ReverseSequence", {}, {x, ints({3}, {1, 4, 0})}), "sequence_lens[1] = 4 is outside [0, 2]");
    EXPECT_ERROR_WITH(run("ReverseSequence", {}, {x, ints({3}, {1, -1, 0})}), "sequence_lens[1] = -1");
    EXPECT_ERROR_WITH(run("ReverseSequence", {}, {x, ints({2}, {1, 1})}), "sequence_lens (input 1) must have shape (3,)");
    EXPECT_ERROR_WITH(run("ReverseSequence", params({{0, 0}, {1, 0}}), {x, ints({3}, {1, 1, 1})}), "batch_axis (param 0)");
    EXPECT_ERROR_WITH(run("ReverseSequence", params({{0, 2}}), {x, ints({3}, {1, 1, 1})}), "must be 0 and 1");
    EXPECT_ERROR_WITH(run("ReverseSequence", {}, {random_floats({3}, 1), ints({1}, {1})}), "rank >= 2");
}

// ---- Det ------------------------------------------------------------------------------------------

TEST(LossesDet, BatchesOfMatricesMatchCofactorExpansion)
{
    for (int64_t m : {1, 2, 3, 4}) {
        const Tensor x = random_floats({2, 3, m, m}, static_cast<unsigned>(m), -2, 2, DType::F64);
        const std::vector<double> v = as_doubles(x);
        std::vector<double> want;
        for (size_t b = 0; b < 6; ++b) {
            const size_t n = static_cast<size_t>(m * m);
            want.push_back(ref_det(std::vector<double>(v.begin() + b * n, v.begin() + (b + 1) * n), static_cast<size_t>(m)));
        }
        expect_near_all(run("Det", {}, {x})[0], {2, 3}, want, 1e-10);
    }
    // Needs a row swap (zero pivot), singular, and float32.
    expect_near_all(run("Det", {}, {floats({2, 2}, {0, 2, 3, 4})})[0], {}, {-6}, 1e-6);
    expect_near_all(run("Det", {}, {floats({3, 3}, {1, 2, 3, 2, 4, 6, 7, 8, 9})})[0], {}, {0}, 1e-6);
    expect_near_all(run("Det", {}, {floats({1, 0, 0}, {})})[0], {1}, {1}, 0);
}

TEST(LossesDet, RejectsNonSquareAndIntegers)
{
    EXPECT_ERROR_WITH(run("Det", {}, {random_floats({2, 3}, 1)}), "(*, M, M)");
    EXPECT_ERROR_WITH(run("Det", {}, {random_floats({3}, 1)}), "(*, M, M)");
    EXPECT_ERROR_WITH(run("Det", {}, {ints({2, 2}, {1, 2, 3, 4})}), "must be a float tensor");
}

// ---- Unique --------------------------------------------------------------------------------------

// The spec's outputs, from plain list searches over the items (elements, or
// slices along the axis in row-major order).
struct UniqueRef {
    std::vector<std::vector<double>> values;
    std::vector<int64_t> indices, inverse, counts;
};

UniqueRef ref_unique(const std::vector<std::vector<double>>& items, bool sorted)
{
    UniqueRef r;
    for (size_t i = 0; i < items.size(); ++i)
        if (std::find(r.values.begin(), r.values.end(), items[i]) == r.values.end()) r.values.push_back(items[i]);
    if (sorted) std::sort(r.values.begin(), r.values.end());
    for (const auto& v : r.values) {
        r.indices.push_back(std::find(items.begin(), items.end(), v) - items.begin());
        r.counts.push_back(std::count(items.begin(), items.end(), v));
    }
    for (const auto& item : items)
        r.inverse.push_back(std::find(r.values.begin(), r.values.end(), item) - r.values.begin());
    return r;
}

// Slices of x along `axis` (every element alone when axis is out of [0, rank)).
std::vector<std::vector<double>> items_of(const Tensor& x, int axis)
{
    const std::vector<double> v = as_doubles(x);
    if (axis < 0 || axis >= x.rank()) {
        std::vector<std::vector<double>> items;
        for (double e : v) items.push_back({e});
        return items;
    }
    std::vector<std::vector<double>> items(static_cast<size_t>(x.shape()[static_cast<size_t>(axis)]));
    for (int64_t i = 0; i < x.numel(); ++i)
        items[static_cast<size_t>(coords_of(i, x.shape())[static_cast<size_t>(axis)])].push_back(v[static_cast<size_t>(i)]);
    return items;
}

void expect_ints(const Tensor& got, const std::vector<int64_t>& want)
{
    ASSERT_EQ(got.dtype(), DType::I64);
    ASSERT_EQ(got.shape(), Shape{static_cast<int64_t>(want.size())});
    EXPECT_EQ(std::vector<int64_t>(got.data<int64_t>(), got.data<int64_t>() + got.numel()), want);
}

TEST(LossesUnique, ElementsAndSlicesSortedAndUnsorted)
{
    const Tensor flat = floats({8}, {2, 1, 1, 3, 4, 3, -1, 1});
    const Tensor rows = floats({4, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4, 0, 5, 5});
    const Tensor cube = floats({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1});
    struct Case {
        Tensor x;
        int axis; // 99: no axis
    };
    for (const Case& c : {Case{flat, 99}, Case{rows, 99}, Case{rows, 0}, Case{rows, 1}, Case{rows, -2}, Case{cube, 1},
                          Case{cube, 2}, Case{cube, -3}}) {
        for (int sorted : {1, 0}) {
            for (DType t : {DType::F32, DType::I64}) {
                const Tensor x = c.x.to(t);
                ParamDict pd = params({{2, sorted}});
                int axis = 99;
                if (c.axis != 99) {
                    pd.set_int(0, c.axis);
                    pd.set_int(1, 1);
                    axis = c.axis < 0 ? c.axis + x.rank() : c.axis;
                }
                const UniqueRef ref = ref_unique(items_of(x, axis), sorted != 0);
                const std::vector<Tensor> y = run("Unique", pd, {x}, 4);
                Shape ys = {static_cast<int64_t>(ref.values.size())};
                if (axis != 99) {
                    ys = x.shape();
                    ys[static_cast<size_t>(axis)] = static_cast<int64_t>(ref.values.size());
                }
                // Y's slices along the axis are the reference's unique items.
                ASSERT_EQ(y[0].shape(), ys);
                EXPECT_EQ(y[0].dtype(), t);
                EXPECT_EQ(items_of(y[0], axis), ref.values) << "axis " << c.axis << " sorted " << sorted;
                expect_ints(y[1], ref.indices);
                expect_ints(y[2], ref.inverse);
                expect_ints(y[3], ref.counts);
            }
        }
    }
}

TEST(LossesUnique, EmptyInputOneOutputAndBadAxis)
{
    const std::vector<Tensor> y = run("Unique", {}, {floats({0}, {})}, 4);
    EXPECT_EQ(y[0].shape(), Shape{0});
    expect_ints(y[3], {});
    const Tensor only = run("Unique", {}, {floats({3}, {5, 5, 4})})[0];
    expect_near_all(only, {2}, {4, 5}, 0);
    EXPECT_ERROR_WITH(run("Unique", params({{0, 2}, {1, 1}}), {floats({3}, {5, 5, 4})}), "axis (param 0) 2 is out of range");
    EXPECT_ERROR_WITH(run("Unique", params({{1, 1}}), {floats({}, {5})}), "rank >= 1");
    EXPECT_ERROR_WITH(run("Unique", {}, {floats({3}, {5, 5, 4})}, 5), "expects 1 to 4 outputs");
}

#ifdef KESTREL_HAVE_ONNX
// ---- the importer -----------------------------------------------------------------------------------

// A one-node ONNX model. Inputs are graph inputs of the given element type and
// shape; constants are initializers.
struct OnnxNode {
    onnx::ModelProto model;
    onnx::NodeProto* node;

    OnnxNode(int opset, const std::string& op)
    {
        model.set_ir_version(8);
        model.add_opset_import()->set_version(opset);
        model.mutable_graph()->set_name("g");
        node = model.mutable_graph()->add_node();
        node->set_op_type(op);
        node->set_name("node");
    }
    OnnxNode& input(const std::string& name, int elem_type, const Shape& shape)
    {
        node->add_input(name);
        onnx::ValueInfoProto* vi = model.mutable_graph()->add_input();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elem_type);
        tt->mutable_shape();
        for (int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
        return *this;
    }
    // A scalar initializer, float or bool.
    OnnxNode& constant(const std::string& name, float value, int elem_type = onnx::TensorProto::FLOAT)
    {
        node->add_input(name);
        onnx::TensorProto* t = model.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(elem_type);
        if (elem_type == onnx::TensorProto::BOOL) t->add_int32_data(value != 0 ? 1 : 0);
        else t->add_float_data(value);
        return *this;
    }
    OnnxNode& absent_input()
    {
        node->add_input("");
        return *this;
    }
    // Dims of the output are symbolic.
    OnnxNode& output(const std::string& name, int elem_type, int rank)
    {
        node->add_output(name);
        onnx::ValueInfoProto* vi = model.mutable_graph()->add_output();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(elem_type);
        tt->mutable_shape();
        for (int k = 0; k < rank; ++k) tt->mutable_shape()->add_dim()->set_dim_param(name + std::to_string(k));
        return *this;
    }
    OnnxNode& attr(const std::string& name, int64_t v)
    {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
        return *this;
    }
    OnnxNode& attr(const std::string& name, const std::string& v)
    {
        auto* a = node->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(v);
        return *this;
    }
    std::vector<Tensor> run(const std::vector<Tensor>& inputs) const { return layer_test::run_model(model, inputs); }
};

constexpr int kFloat = onnx::TensorProto::FLOAT;

TEST(LossesImport, SoftmaxFamilyBeforeOpset13CoercesTo2D)
{
    const Tensor x = random_floats({2, 3, 4}, 21);
    struct Op {
        const char* name;
        GroupRef ref;
    };
    for (const Op& op : {Op{"Softmax", ref_softmax}, Op{"LogSoftmax", ref_log_softmax}, Op{"Hardmax", ref_hardmax}}) {
        for (int axis : {0, 1, 2, -1, -2}) {
            OnnxNode m(11, op.name);
            m.input("x", kFloat, {2, 3, 4}).output("y", kFloat, 3).attr("axis", axis);
            expect_near_all(m.run({x})[0], x.shape(), ref_coerced(op.ref, x, axis), 1e-5);
        }
        OnnxNode by_default(11, op.name); // axis 1
        by_default.input("x", kFloat, {2, 3, 4}).output("y", kFloat, 3);
        expect_near_all(by_default.run({x})[0], x.shape(), ref_coerced(op.ref, x, 1), 1e-5);
    }
}

TEST(LossesImport, SoftmaxFamilyFromOpset13WorksAlongOneAxis)
{
    const Tensor x = random_floats({2, 3, 4}, 22);
    struct Op {
        const char* name;
        GroupRef ref;
    };
    for (const Op& op : {Op{"Softmax", ref_softmax}, Op{"LogSoftmax", ref_log_softmax}, Op{"Hardmax", ref_hardmax}}) {
        for (int axis : {0, 1, -2}) {
            OnnxNode m(13, op.name);
            m.input("x", kFloat, {2, 3, 4}).output("y", kFloat, 3).attr("axis", axis);
            expect_near_all(m.run({x})[0], x.shape(), ref_along_axis(op.ref, x, axis), 1e-5);
        }
        OnnxNode by_default(13, op.name); // axis -1
        by_default.input("x", kFloat, {2, 3, 4}).output("y", kFloat, 3);
        expect_near_all(by_default.run({x})[0], x.shape(), ref_along_axis(op.ref, x, -1), 1e-5);
    }
}

TEST(LossesImport, SoftmaxCrossEntropyIsNllOfLogSoftmaxOverClasses)
{
    const Tensor x = random_floats({2, 3, 2}, 23);
    const std::vector<int64_t> labels = {2, 0, -5, 1};
    const std::vector<double> weight = {0.5, 2, 1};
    const Tensor log_prob_want = floats(x.shape(), ref_along_axis(ref_log_softmax, x, 1));
    const int64_t ignore = -5;
    const NllRef ref = ref_nll(log_prob_want, labels, weight, &ignore);
    for (const char* reduction : {"none", "sum", "mean"}) {
        OnnxNode m(13, "SoftmaxCrossEntropyLoss");
        m.input("x", kFloat, {2, 3, 2}).input("y", onnx::TensorProto::INT64, {2, 2}).input("w", kFloat, {3});
        m.output("loss", kFloat, std::string(reduction) == "none" ? 2 : 0).output("log_prob", kFloat, 3);
        m.attr("reduction", reduction).attr("ignore_index", ignore);
        const std::vector<Tensor> y = m.run({x, ints({2, 2}, labels), floats({3}, weight)});
        ASSERT_EQ(y.size(), 2u);
        const std::string r = reduction;
        if (r == "none") expect_near_all(y[0], {2, 2}, ref.loss, 1e-5);
        if (r == "sum") expect_near_all(y[0], {}, {sum_of(ref.loss)}, 1e-5);
        if (r == "mean") expect_near_all(y[0], {}, {sum_of(ref.loss) / ref.weight_sum}, 1e-5);
        expect_near_all(y[1], x.shape(), as_doubles(log_prob_want), 1e-5);
    }
    OnnxNode bad(13, "NegativeLogLikelihoodLoss");
    bad.input("x", kFloat, {2, 3}).input("y", onnx::TensorProto::INT64, {2}).output("loss", kFloat, 0);
    bad.attr("reduction", "max");
    EXPECT_ERROR_WITH(bad.run({}), "reduction 'max' is not none, sum or mean");
}

TEST(LossesImport, DropoutMaskAndTrainingMode)
{
    const Tensor x = random_floats({2, 3}, 24);
    const std::vector<double> ones(6, 1.0);
    {   // Inference: data and an all-true mask.
        OnnxNode m(13, "Dropout");
        m.input("x", kFloat, {2, 3}).output("y", kFloat, 2).output("mask", onnx::TensorProto::BOOL, 2);
        const std::vector<Tensor> y = m.run({x});
        expect_near_all(y[0], x.shape(), as_doubles(x), 0);
        EXPECT_EQ(y[1].dtype(), DType::Bool);
        expect_near_all(y[1], x.shape(), ones, 0);
    }
    {   // Training mode fed at run time, no ratio (0.5): refused when true, identity when false.
        OnnxNode m(13, "Dropout");
        m.input("x", kFloat, {2, 3}).absent_input().input("t", onnx::TensorProto::BOOL, {});
        m.output("y", kFloat, 2).output("mask", onnx::TensorProto::BOOL, 2);
        expect_near_all(m.run({x, bool_scalar(false)})[1], x.shape(), ones, 0);
        EXPECT_ERROR_WITH(m.run({x, bool_scalar(true)}), "training mode with ratio 0.5");
    }
    {   // Constant training mode with a ratio 0: the identity.
        OnnxNode m(13, "Dropout");
        m.input("x", kFloat, {2, 3}).constant("r", 0.f).constant("t", 1, onnx::TensorProto::BOOL).output("y", kFloat, 2);
        expect_near_all(m.run({x})[0], x.shape(), as_doubles(x), 0);
    }
    {   // Constant training mode with a ratio > 0: a conversion error.
        OnnxNode m(13, "Dropout");
        m.input("x", kFloat, {2, 3}).constant("r", 0.25f).constant("t", 1, onnx::TensorProto::BOOL).output("y", kFloat, 2);
        EXPECT_ERROR_WITH(m.run({x}), "training mode with ratio 0.25 > 0");
    }
    {   // Opset 7: the mask has the data's type.
        OnnxNode m(7, "Dropout");
        m.input("x", kFloat, {2, 3}).output("y", kFloat, 2).output("mask", kFloat, 2);
        const std::vector<Tensor> y = m.run({x});
        EXPECT_EQ(y[1].dtype(), DType::F32);
        expect_near_all(y[1], x.shape(), ones, 0);
    }
}

TEST(LossesImport, WindowOutputDatatypeAndRuntimeSize)
{
    OnnxNode m(17, "HannWindow");
    m.input("n", onnx::TensorProto::INT64, {}).output("y", onnx::TensorProto::DOUBLE, 1).attr("periodic", 0);
    m.attr("output_datatype", static_cast<int64_t>(onnx::TensorProto::DOUBLE));
    const Tensor y = m.run({ints({}, {5})})[0];
    EXPECT_EQ(y.dtype(), DType::F64);
    expect_near_all(y, {5}, {0, 0.5, 1, 0.5, 0}, 1e-12);
}
#endif

} // namespace
