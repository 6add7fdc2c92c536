// Graph optimizer on imported ONNX models: the importer optimizes by default;
// MatMul (+ bias Add) -> InnerProduct; the LayerNorm, GELU, Swish, HardSwish
// and attention patterns; the older passes on ONNX graphs; MatMul of any rank
// with numpy batch broadcasting. Each rewrite is checked three ways: the
// layer types after optimizing, the outputs against the unoptimized graph, and
// against a naive reference written from the formula (here; for attention, the
// SDPA layer's in tests/test_sdpa.cpp). Each pattern also has negative cases
// (not exact) that must be left alone.
#include <cmath>
#include <random>

#include "graph/graph.h"
#include "layer_test_util.h"
#include "onnx_test_graph.h"
#include "reference_util.h"

namespace kestrel {
namespace {

using layer_test::f32;
using layer_test::values;
using testing::expect_close_to_reference;

using layer_test::random_f32;

Tensor from_doubles(const Shape& shape, const std::vector<double>& v)
{
    Tensor t(shape, DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(v[static_cast<size_t>(i)]);
    return t;
}

int count_layers(const Net& net, const std::string& type)
{
    int n = 0;
    for (const Layer& l : net.graph().layers) n += l.type == type;
    return n;
}

// Layer types other than Input and Constant, in order.
std::vector<std::string> compute_layers(const Net& net)
{
    std::vector<std::string> types;
    for (const Layer& l : net.graph().layers)
        if (l.type != "Input" && l.type != "Constant") types.push_back(l.type);
    return types;
}

Tensor run_net(const Net& net, const std::vector<std::pair<std::string, Tensor>>& inputs, const std::string& output)
{
    Session s(net);
    for (const auto& [name, t] : inputs) s.set_input(name, t);
    return s.get(output);
}

// ---- naive references ---------------------------------------------------------------------

std::vector<double> layer_norm_ref(const Tensor& x, const std::vector<float>& gamma, const std::vector<float>& beta,
                                   double eps)
{
    const int64_t c = x.shape().back(), rows = x.numel() / c;
    std::vector<double> y;
    for (int64_t r = 0; r < rows; ++r) {
        const float* v = x.data<float>() + r * c;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < c; ++i) mean += v[i];
        mean /= static_cast<double>(c);
        for (int64_t i = 0; i < c; ++i) var += (v[i] - mean) * (v[i] - mean);
        var /= static_cast<double>(c);
        for (int64_t i = 0; i < c; ++i) {
            const double n = (v[i] - mean) / std::sqrt(var + eps);
            y.push_back(gamma.empty() ? n : n * gamma[static_cast<size_t>(i)] + beta[static_cast<size_t>(i)]);
        }
    }
    return y;
}

template <class F> Tensor map_ref(const Tensor& x, F f)
{
    std::vector<double> y;
    for (int64_t i = 0; i < x.numel(); ++i) y.push_back(f(static_cast<double>(x.data<float>()[i])));
    return from_doubles(x.shape(), y);
}

double gelu_ref(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double swish_ref(double x) { return x / (1.0 + std::exp(-x)); }
double hard_swish_ref(double x) { return x * std::min(std::max(x / 6.0 + 0.5, 0.0), 1.0); }

// numpy matmul: batch axes right-aligned and broadcast; a 1-D A is a row, a 1-D B a column.
Tensor matmul_ref(const Tensor& a, const Tensor& b)
{
    Shape as = a.shape(), bs = b.shape();
    const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
    if (a_vec) as.insert(as.begin(), 1);
    if (b_vec) bs.push_back(1);
    const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
    Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    const size_t nb = std::max(ab.size(), bb.size());
    ab.insert(ab.begin(), nb - ab.size(), 1);
    bb.insert(bb.begin(), nb - bb.size(), 1);
    Shape batch(nb), out;
    for (size_t i = 0; i < nb; ++i) batch[i] = std::max(ab[i], bb[i]);
    out = batch;
    if (!a_vec) out.push_back(M);
    if (!b_vec) out.push_back(N);
    std::vector<double> y;
    for (int64_t flat = 0; flat < shape_numel(batch); ++flat) {
        int64_t rest = flat, ao = 0, bo = 0, a_stride = 1, b_stride = 1;
        for (size_t i = nb; i-- > 0;) {
            const int64_t idx = rest % batch[i];
            rest /= batch[i];
            ao += (ab[i] == 1 ? 0 : idx) * a_stride;
            bo += (bb[i] == 1 ? 0 : idx) * b_stride;
            a_stride *= ab[i];
            b_stride *= bb[i];
        }
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double s = 0;
                for (int64_t k = 0; k < K; ++k)
                    s += static_cast<double>(a.data<float>()[ao * M * K + i * K + k]) * b.data<float>()[bo * K * N + k * N + j];
                y.push_back(s);
            }
    }
    return from_doubles(out, y);
}

Tensor add_last_axis(const Tensor& y, const Tensor& bias)
{
    Tensor out = y.clone();
    const int64_t n = bias.numel();
    for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] += bias.data<float>()[i % n];
    return out;
}

// ---- MatMul of any rank (the layer itself) ---------------------------------------------------

Tensor run_matmul_layer(const Tensor& a, const Tensor& b)
{
    return layer_test::run1("MatMul", ParamDict(), {layer_test::R(a), layer_test::R(b)});
}

TEST(MatMulAnyRank, BatchAxesBroadcastLikeNumpy)
{
    const std::vector<std::pair<Shape, Shape>> cases = {
        {{2, 1, 3, 4, 5}, {3, 1, 5, 6}},    // rank 5 . rank 4, both sides broadcast
        {{4, 5}, {2, 2, 1, 2, 5, 3}},       // one matrix against rank 6
        {{2, 3, 1, 1, 2, 4}, {1, 2, 4, 3}}, // rank 6 . rank 4
        {{5}, {2, 1, 3, 5, 4}},             // vector . rank 5
        {{2, 3, 2, 4, 5}, {5}},             // rank 5 . vector
        {{1, 1, 1, 1, 2, 3}, {3, 2}},       // all-ones batch
    };
    uint32_t seed = 1;
    for (const auto& [as, bs] : cases) {
        SCOPED_TRACE(shape_str(as) + " . " + shape_str(bs));
        const Tensor a = random_f32(as, seed++), b = random_f32(bs, seed++);
        expect_close_to_reference(run_matmul_layer(a, b), matmul_ref(a, b), 1e-5);
    }
}

TEST(MatMulAnyRank, MismatchedBatchAxesAreAnError)
{
    const std::string msg = layer_test::error_of([] {
        run_matmul_layer(random_f32({2, 2, 3, 4}, 1), random_f32({3, 1, 3, 4, 5}, 2));
    });
    EXPECT_TRUE(layer_test::contains(msg, "do not broadcast")) << msg;
}

#ifdef KESTREL_HAVE_ONNX

// ---- building ONNX models in memory --------------------------------------------------------

using layer_test::OnnxGraph;

// The optimized and unoptimized nets of a model with one input "x", their outputs for `x`.
struct Both {
    Net plain, optimized;
    Tensor plain_out, optimized_out;
};
Both load_both(const OnnxGraph& g, const std::vector<std::pair<std::string, Tensor>>& inputs,
               const std::string& output = "y")
{
    Both b{g.load(false), g.load(true), Tensor(), Tensor()};
    b.plain_out = run_net(b.plain, inputs, output);
    b.optimized_out = run_net(b.optimized, inputs, output);
    return b;
}
Both load_both(const OnnxGraph& g, const Tensor& x, const std::string& output = "y")
{
    return load_both(g, {{"x", x}}, output);
}

// ---- the importer optimizes by default ------------------------------------------------------

TEST(OnnxOptimize, ImporterOptimizesUnlessTurnedOff)
{
    OnnxGraph g;
    g.input("x", {2, 3});
    g.node("Identity", {"x"}, {"i"});
    g.node("Relu", {"i"}, {"y"});
    g.output("y", 2);
    const Tensor x = random_f32({2, 3}, 5);
    const Both b = load_both(g, x);
    EXPECT_EQ(compute_layers(b.plain), (std::vector<std::string>{"Noop", "ReLU"}));
    EXPECT_EQ(compute_layers(b.optimized), (std::vector<std::string>{"ReLU"}));
    expect_close_to_reference(b.optimized_out, map_ref(x, [](double v) { return std::max(v, 0.0); }), 0);
}

TEST(OnnxOptimize, ConvertCommandOptimizesUnlessNoOptimize)
{
    const std::string model = testing::shared_path("models/tiny_vit/model.onnx");
    const std::string base = ::testing::TempDir() + "kestrel_optimize_flag";
    auto layers_after = [&](const std::string& flag) {
        const std::string cmd = std::string(KESTREL_TOOL_PATH) + " convert " + model + " " + base + ".param " + base +
                                ".bin " + flag + " > /dev/null";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
        Net net;
        net.load_param(base + ".param");
        net.load_model(base + ".bin");
        return std::make_pair(count_layers(net, "LayerNorm"), net.graph().layers.size());
    };
    const auto optimized = layers_after(""), plain = layers_after("--no-optimize");
    EXPECT_EQ(optimized.first, 5);
    EXPECT_EQ(plain.first, 0);
    EXPECT_LT(optimized.second, plain.second);
}

// ---- the older passes on an ONNX graph ------------------------------------------------------

TEST(OnnxOptimize, ConvBatchNormReluIdentityDropoutConstantsAndDeadNodes)
{
    OnnxGraph g;
    g.input("x", {1, 3, 6, 6});
    g.init("w", random_f32({4, 3, 3, 3}, 1, -0.5f, 0.5f));
    g.init("b", random_f32({4}, 2));
    g.init("scale", random_f32({4}, 3, 0.5f, 1.5f));
    g.init("bias", random_f32({4}, 4));
    g.init("mean", random_f32({4}, 5));
    g.init("var", random_f32({4}, 6, 0.2f, 2.f));
    g.init("k1", random_f32({4, 1, 1}, 7));
    g.init("k2", random_f32({4, 1, 1}, 8));
    g.node("Conv", {"x", "w", "b"}, {"c"});
    g.node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"bn"});
    g.node("Relu", {"bn"}, {"r"});
    g.node("Identity", {"r"}, {"i"});
    g.node("Dropout", {"i"}, {"d"});
    g.node("Sigmoid", {"x"}, {"dead"}); // read by nothing
    g.node("Add", {"k1", "k2"}, {"k"}); // two constants
    g.node("Add", {"d", "k"}, {"y"});
    g.output("y", 4);
    const Tensor x = random_f32({1, 3, 6, 6}, 9);
    const Both b = load_both(g, x);
    EXPECT_EQ(compute_layers(b.optimized), (std::vector<std::string>{"Convolution", "BinaryOp"}));
    EXPECT_EQ(b.optimized.graph().layers[count_layers(b.optimized, "Input")].type, "Constant"); // k, folded
    EXPECT_GT(b.plain.graph().layers.size(), b.optimized.graph().layers.size());
    expect_close_to_reference(b.optimized_out, b.plain_out, 1e-5);
}

TEST(OnnxOptimize, BatchNormFoldsIntoGemm)
{
    OnnxGraph g;
    g.input("x", {2, 5});
    g.init("w", random_f32({3, 5}, 1));
    g.init("c", random_f32({3}, 2));
    g.init("scale", random_f32({3}, 3, 0.5f, 1.5f));
    g.init("bias", random_f32({3}, 4));
    g.init("mean", random_f32({3}, 5));
    g.init("var", random_f32({3}, 6, 0.2f, 2.f));
    OnnxGraph::attr_int(g.node("Gemm", {"x", "w", "c"}, {"gm"}), "transB", 1);
    g.node("BatchNormalization", {"gm", "scale", "bias", "mean", "var"}, {"y"});
    g.output("y", 2);
    const Tensor x = random_f32({2, 5}, 9);
    const Both b = load_both(g, x);
    EXPECT_EQ(compute_layers(b.optimized), (std::vector<std::string>{"InnerProduct"}));
    expect_close_to_reference(b.optimized_out, b.plain_out, 1e-5);
}

TEST(OnnxOptimize, ConstantFoldingDoesNotMaterializeLargeTensors)
{
    OnnxGraph g;
    g.input("x", {300, 300});
    g.int64s("shape", {300, 300});
    g.node("ConstantOfShape", {"shape"}, {"ones"}); // 0 by default: 360 KB if folded
    g.node("Add", {"x", "ones"}, {"y"});
    g.output("y", 2);
    const Tensor x = random_f32({300, 300}, 3);
    const Both b = load_both(g, x);
    EXPECT_EQ(count_layers(b.optimized, "ConstantOfShape"), 1);
    expect_close_to_reference(b.optimized_out, x, 0);
}

// ---- MatMul (+ Add) -> InnerProduct ---------------------------------------------------------

// y = MatMul(x, B) + bias (bias first, as PyTorch writes it).
OnnxGraph matmul_add_model(const Shape& x_shape, const Tensor& b, const Tensor& bias, bool product_is_output = false)
{
    OnnxGraph g;
    g.input("x", x_shape);
    g.init("B", b);
    g.init("bias", bias);
    g.node("MatMul", {"x", "B"}, {"p"});
    g.node("Add", {"bias", "p"}, {"y"});
    g.output("y", static_cast<int>(x_shape.size()));
    if (product_is_output) g.output("p", static_cast<int>(x_shape.size()));
    return g;
}

TEST(FuseMatMul, MatMulAndBiasBecomeInnerProductForRanks1To3)
{
    const Tensor b = random_f32({4, 5}, 1), bias = random_f32({5}, 2);
    for (const Shape& xs : {Shape{4}, Shape{3, 4}, Shape{2, 3, 4}}) {
        SCOPED_TRACE(shape_str(xs));
        const Tensor x = random_f32(xs, 3);
        const Both r = load_both(matmul_add_model(xs, b, bias), x);
        EXPECT_EQ(compute_layers(r.optimized), (std::vector<std::string>{"InnerProduct"}));
        expect_close_to_reference(r.optimized_out, r.plain_out, 1e-5);
        expect_close_to_reference(r.optimized_out, add_last_axis(matmul_ref(x, b), bias), 1e-5);
    }
}

TEST(FuseMatMul, LeftAloneWhereInnerProductWouldNotBeExact)
{
    const Tensor b = random_f32({4, 5}, 1);
    // Rank 4: InnerProduct would flatten each sample.
    {
        const Tensor x = random_f32({2, 2, 3, 4}, 3), bias = random_f32({5}, 2);
        const Both r = load_both(matmul_add_model(x.shape(), b, bias), x);
        EXPECT_EQ(compute_layers(r.optimized), (std::vector<std::string>{"MatMul", "BinaryOp"}));
        expect_close_to_reference(r.optimized_out, add_last_axis(matmul_ref(x, b), bias), 1e-5);
    }
    // A bias per row and column (3, 5) is no bias along the last axis: MatMul alone is fused.
    {
        const Tensor x = random_f32({3, 4}, 3), bias = random_f32({3, 5}, 2);
        const Both r = load_both(matmul_add_model(x.shape(), b, bias), x);
        EXPECT_EQ(compute_layers(r.optimized), (std::vector<std::string>{"InnerProduct", "BinaryOp"}));
        Tensor ref = matmul_ref(x, b);
        for (int64_t i = 0; i < ref.numel(); ++i) ref.data<float>()[i] += bias.data<float>()[i];
        expect_close_to_reference(r.optimized_out, ref, 1e-5);
    }
    // The product is also a graph output: the Add stays.
    {
        const Tensor x = random_f32({3, 4}, 3), bias = random_f32({5}, 2);
        const OnnxGraph g = matmul_add_model(x.shape(), b, bias, true);
        const Net net = g.load(true);
        EXPECT_EQ(compute_layers(net), (std::vector<std::string>{"InnerProduct", "BinaryOp"}));
        expect_close_to_reference(run_net(net, {{"x", x}}, "p"), matmul_ref(x, b), 1e-5);
    }
}

TEST(FuseMatMul, NetApiNeedsShapeHintsAndHonoursTransB)
{
    const Tensor bt = random_f32({5, 4}, 1); // (N, K)
    auto build = [&](Net& net) {
        net.add_layer("Input", "in", {}, {"x"});
        net.add_layer("Constant", "B", {}, {"B"}, layer_test::constant_params(bt), {bt});
        ParamDict pd;
        pd.set_int(0, 1); // transB
        net.add_layer("MatMul", "mm", {"x", "B"}, {"y"}, pd);
        net.finish_graph();
    };
    Net without_hints, with_hints;
    build(without_hints);
    build(with_hints);
    EXPECT_TRUE(without_hints.optimize().empty());
    EXPECT_EQ(compute_layers(without_hints), (std::vector<std::string>{"MatMul"}));
    const std::vector<std::string> applied = with_hints.optimize({{"x", {2, -1, 4}}});
    EXPECT_EQ(applied, (std::vector<std::string>{"fused MatMul 'mm' into InnerProduct", "removed unused Constant 'B'"}));
    EXPECT_EQ(compute_layers(with_hints), (std::vector<std::string>{"InnerProduct"}));
    Tensor b({4, 5}); // B = transpose(bt)
    for (int64_t k = 0; k < 4; ++k)
        for (int64_t n = 0; n < 5; ++n) b.data<float>()[k * 5 + n] = bt.data<float>()[n * 4 + k];
    const Tensor x = random_f32({2, 3, 4}, 2);
    expect_close_to_reference(run_net(with_hints, {{"x", x}}, "y"), matmul_ref(x, b), 1e-5);
    expect_close_to_reference(run_net(without_hints, {{"x", x}}, "y"), matmul_ref(x, b), 1e-5);
}

// ---- LayerNorm ------------------------------------------------------------------------------

struct LayerNormForm {
    Shape shape = {2, 5, 8};
    bool square_by_mul = false; // Mul(d, d) instead of Pow(d, 2)
    bool affine = true, with_beta = true;
    bool gamma_per_row = false;  // gamma (5, 8): not along the last axis alone
    int64_t axis = -1;
    bool eps_after_sqrt = false; // sqrt(var) + eps: another formula
    bool diff_is_output = false;
};

OnnxGraph layer_norm_model(const LayerNormForm& f, const Tensor& gamma, const Tensor& beta)
{
    OnnxGraph g;
    g.input("x", f.shape);
    g.scalar("two", 2.f);
    g.scalar("eps", 1e-5f);
    g.init("gamma", gamma);
    g.init("beta", beta);
    OnnxGraph::attr_ints(g.node("ReduceMean", {"x"}, {"mean"}), "axes", {f.axis});
    g.node("Sub", {"x", "mean"}, {"d"});
    if (f.square_by_mul) g.node("Mul", {"d", "d"}, {"sq"});
    else g.node("Pow", {"d", "two"}, {"sq"});
    OnnxGraph::attr_ints(g.node("ReduceMean", {"sq"}, {"var"}), "axes", {f.axis});
    if (f.eps_after_sqrt) {
        g.node("Sqrt", {"var"}, {"sd0"});
        g.node("Add", {"sd0", "eps"}, {"sd"});
    } else {
        g.node("Add", {"var", "eps"}, {"ve"});
        g.node("Sqrt", {"ve"}, {"sd"});
    }
    const std::string n = f.affine ? "n" : "y";
    g.node("Div", {"d", "sd"}, {n});
    if (f.affine) {
        g.node("Mul", {"n", "gamma"}, {f.with_beta ? "g" : "y"});
        if (f.with_beta) g.node("Add", {"g", "beta"}, {"y"});
    }
    g.output("y", static_cast<int>(f.shape.size()));
    if (f.diff_is_output) g.output("d", static_cast<int>(f.shape.size()));
    return g;
}

Both run_layer_norm_form(const LayerNormForm& f, std::vector<float>& gamma, std::vector<float>& beta, Tensor& x)
{
    const int64_t c = f.shape.back();
    const Tensor gm = random_f32(f.gamma_per_row ? Shape{f.shape[f.shape.size() - 2], c} : Shape{c}, 11, 0.5f, 1.5f);
    const Tensor bt = random_f32({c}, 12);
    x = random_f32(f.shape, 13, -3.f, 3.f);
    gamma = f.affine ? values<float>(gm) : std::vector<float>();
    beta = f.affine ? (f.with_beta ? values<float>(bt) : std::vector<float>(static_cast<size_t>(c), 0.f)) : std::vector<float>();
    return load_both(layer_norm_model(f, gm, bt), x);
}

TEST(FuseLayerNorm, PyTorchExportsBecomeOneLayerNorm)
{
    std::vector<LayerNormForm> forms(6);
    forms[1].square_by_mul = true;
    forms[2].with_beta = false;
    forms[3].affine = false;
    forms[4].shape = {3, 7};
    forms[5].shape = {2, 2, 3, 6};
    forms[5].axis = 3;
    for (const LayerNormForm& f : forms) {
        SCOPED_TRACE(shape_str(f.shape) + (f.square_by_mul ? " mul" : "") + (f.affine ? "" : " no affine"));
        std::vector<float> gamma, beta;
        Tensor x;
        const Both r = run_layer_norm_form(f, gamma, beta, x);
        EXPECT_EQ(compute_layers(r.optimized), (std::vector<std::string>{"LayerNorm"}));
        expect_close_to_reference(r.optimized_out, r.plain_out, 1e-5);
        expect_close_to_reference(r.optimized_out, from_doubles(x.shape(), layer_norm_ref(x, gamma, beta, 1e-5)), 1e-5);
    }
}

TEST(FuseLayerNorm, NotExactFormsAreLeftAlone)
{
    std::vector<LayerNormForm> forms(3);
    forms[0].diff_is_output = true; // an intermediate is a graph output
    forms[1].axis = 1;              // not the last axis
    forms[2].eps_after_sqrt = true; // epsilon outside the square root
    for (const LayerNormForm& f : forms) {
        std::vector<float> gamma, beta;
        Tensor x;
        const Both r = run_layer_norm_form(f, gamma, beta, x);
        EXPECT_EQ(count_layers(r.optimized, "LayerNorm"), 0);
        EXPECT_EQ(count_layers(r.optimized, "Reduction"), 2);
        expect_close_to_reference(r.optimized_out, r.plain_out, 0);
    }
}

TEST(FuseLayerNorm, GammaNotAlongTheLastAxisStaysAMul)
{
    LayerNormForm f;
    f.gamma_per_row = true;
    std::vector<float> gamma, beta;
    Tensor x;
    const Both r = run_layer_norm_form(f, gamma, beta, x);
    EXPECT_EQ(compute_layers(r.optimized), (std::vector<std::string>{"LayerNorm", "BinaryOp", "BinaryOp"}));
    expect_close_to_reference(r.optimized_out, r.plain_out, 1e-5);
}

// ---- GELU -----------------------------------------------------------------------------------

// form 1: (x * c) * 0.5; 2: (x * 0.5) * c; 3: x * (c * 0.5); c = 1 + erf(x / sqrt 2).
OnnxGraph gelu_model(int form, float half = 0.5f, bool erf_is_output = false)
{
    OnnxGraph g;
    g.input("x", {2, 3, 4});
    g.scalar("sqrt2", static_cast<float>(std::sqrt(2.0)));
    g.scalar("one", 1.f);
    g.scalar("half", half);
    g.node("Div", {"x", "sqrt2"}, {"a"});
    g.node("Erf", {"a"}, {"e"});
    g.node("Add", {"e", "one"}, {"c"});
    if (form == 1) {
        g.node("Mul", {"x", "c"}, {"m"});
        g.node("Mul", {"m", "half"}, {"y"});
    } else if (form == 2) {
        g.node("Mul", {"x", "half"}, {"h"});
        g.node("Mul", {"h", "c"}, {"y"});
    } else {
        g.node("Mul", {"c", "half"}, {"ch"});
        g.node("Mul", {"x", "ch"}, {"y"});
    }
    g.output("y", 3);
    if (erf_is_output) g.output("e", 3);
    return g;
}

TEST(FuseGelu, ExportedOrdersBecomeGelu)
{
    const Tensor x = random_f32({2, 3, 4}, 21, -4.f, 4.f);
    for (int form = 1; form <= 3; ++form) {
        SCOPED_TRACE(form);
        const Both r = load_both(gelu_model(form), x);
        EXPECT_EQ(compute_layers(r.optimized), (std::vector<std::string>{"GELU"}));
        expect_close_to_reference(r.optimized_out, r.plain_out, 1e-5);
        expect_close_to_reference(r.optimized_out, map_ref(x, gelu_ref), 1e-5);
    }
}

TEST(FuseGelu, OtherConstantsOrSharedIntermediatesAreLeftAlone)
{
    const Tensor x = random_f32({2, 3, 4}, 21, -4.f, 4.f);
    for (const Both& r : {load_both(gelu_model(1, 0.6f), x), load_both(gelu_model(2, 0.5f, true), x)}) {
        EXPECT_EQ(count_layers(r.optimized, "GELU"), 0);
        EXPECT_EQ(count_layers(r.optimized, "UnaryOp"), 1); // the Erf
        expect_close_to_reference(r.optimized_out, r.plain_out, 0);
    }
}

// ---- Swish and HardSwish --------------------------------------------------------------------

TEST(FuseSwish, XTimesSigmoidXBecomesSwish)
{
    const Tensor x = random_f32({3, 5}, 31, -6.f, 6.f);
    for (bool sigmoid_first : {false, true}) {
        OnnxGraph g;
        g.input("x", {3, 5});
        g.node("Sigmoid", {"x"}, {"s"});
        g.node("Mul", sigmoid_first ? std::vector<std::string>{"s", "x"} : std::vector<std::string>{"x", "s"}, {"y"});
        g.output("y", 2);
        const Both r = load_both(g, x);
        EXPECT_EQ(compute_layers(r.optimized), (std::vector<std::string>{"Swish"}));
        expect_close_to_reference(r.optimized_out, r.plain_out, 1e-5);
        expect_close_to_reference(r.optimized_out, map_ref(x, swish_ref), 1e-5);
    }
}

TEST(FuseSwish, SigmoidOfAnotherBlobIsLeftAlone)
{
    OnnxGraph g;
    g.input("x", {3, 5});
    g.node("Relu", {"x"}, {"z"});
    g.node("Sigmoid", {"x"}, {"s"});
    g.node("Mul", {"z", "s"}, {"y"});
    g.output("y", 2);
    const Both r = load_both(g, random_f32({3, 5}, 32));
    EXPECT_EQ(compute_layers(r.optimized), (std::vector<std::string>{"ReLU", "Sigmoid", "BinaryOp"}));
    expect_close_to_reference(r.optimized_out, r.plain_out, 0);
}

// form 0: x * HardSigmoid(x); 1: x * Clip(x + 3, 0, 6) / 6; 2: x * (Clip(x + 3, 0, 6) / 6).
OnnxGraph hard_swish_model(int form, float clip_max = 6.f)
{
    OnnxGraph g;
    g.input("x", {4, 6});
    if (form == 0) {
        onnx::NodeProto* hs = g.node("HardSigmoid", {"x"}, {"k"});
        OnnxGraph::attr_float(hs, "alpha", 1.f / 6.f);
        OnnxGraph::attr_float(hs, "beta", 0.5f);
        g.node("Mul", {"x", "k"}, {"y"});
        g.output("y", 2);
        return g;
    }
    g.scalar("three", 3.f);
    g.scalar("zero", 0.f);
    g.scalar("top", clip_max);
    g.scalar("six", 6.f);
    g.node("Add", {"x", "three"}, {"t"});
    g.node("Clip", {"t", "zero", "top"}, {"k"});
    if (form == 1) {
        g.node("Mul", {"x", "k"}, {"m"});
        g.node("Div", {"m", "six"}, {"y"});
    } else {
        g.node("Div", {"k", "six"}, {"k6"});
        g.node("Mul", {"x", "k6"}, {"y"});
    }
    g.output("y", 2);
    return g;
}

TEST(FuseHardSwish, ExportedFormsBecomeHardSwish)
{
    const Tensor x = random_f32({4, 6}, 41, -5.f, 5.f);
    for (int form = 0; form <= 2; ++form) {
        SCOPED_TRACE(form);
        const Both r = load_both(hard_swish_model(form), x);
        EXPECT_EQ(compute_layers(r.optimized), (std::vector<std::string>{"HardSwish"}));
        expect_close_to_reference(r.optimized_out, r.plain_out, 1e-5);
        expect_close_to_reference(r.optimized_out, map_ref(x, hard_swish_ref), 1e-5);
    }
}

TEST(FuseHardSwish, AnotherClipBoundIsLeftAlone)
{
    const Tensor x = random_f32({4, 6}, 41, -5.f, 5.f);
    const Both r = load_both(hard_swish_model(1, 5.f), x);
    EXPECT_EQ(count_layers(r.optimized, "HardSwish"), 0);
    EXPECT_EQ(count_layers(r.optimized, "Clip"), 1);
    expect_close_to_reference(r.optimized_out, r.plain_out, 0);
}

// ---- MatMul of any rank through the importer --------------------------------------------------

TEST(MatMulAnyRank, OnnxRank5BroadcastAndVectorDot)
{
    OnnxGraph g;
    g.input("x", {2, 1, 2, 3, 4});
    g.input("w", {3, 1, 4, 5});
    g.node("MatMul", {"x", "w"}, {"y"});
    g.output("y", 5);
    const Tensor x = random_f32({2, 1, 2, 3, 4}, 1), w = random_f32({3, 1, 4, 5}, 2);
    const Net net = g.load(true);
    expect_close_to_reference(run_net(net, {{"x", x}, {"w", w}}, "y"), matmul_ref(x, w), 1e-5);

    OnnxGraph dot;
    dot.input("x", {4});
    dot.input("w", {4});
    dot.node("MatMul", {"x", "w"}, {"y"});
    dot.output("y", 0);
    const Tensor a = f32({4}, {1, 2, 3, 4}), b = f32({4}, {0.5f, -1, 2, 0.25f});
    const Tensor y = run_net(dot.load(true), {{"x", a}, {"w", b}}, "y");
    EXPECT_EQ(y.shape(), Shape{}); // ONNX: a scalar
    EXPECT_FLOAT_EQ(y.data<float>()[0], 0.5f - 2 + 6 + 1);
}

// ---- attention --------------------------------------------------------------------------------

// softmax(Q . K^T * scale [+ mask]) . V as exporters write it. Q, K and V are
// graph inputs of the given shapes; K is transposed by `key_perm`.
struct AttentionForm {
    Shape q{2, 3, 5, 8}, k{2, 3, 7, 8}, v{2, 3, 7, 4};
    std::vector<int64_t> key_perm{0, 1, 3, 2};
    enum Scale { kScoresDiv, kQueryAndKeyMul, kScoresAfterMask } scale = kScoresDiv;
    Shape mask;              // empty: no mask
    int64_t softmax_axis = -1;
    bool scores_are_output = false;
};

OnnxGraph attention_model(const AttentionForm& f)
{
    OnnxGraph g;
    g.input("q", f.q);
    g.input("k", f.k);
    g.input("v", f.v);
    const float d = static_cast<float>(f.q.back());
    g.scalar("sqrt_d", std::sqrt(d));
    g.scalar("root4", 1.f / std::sqrt(std::sqrt(d)));
    OnnxGraph::attr_ints(g.node("Transpose", {"k"}, {"kt"}), "perm", f.key_perm);
    std::string q = "q", kt = "kt";
    if (f.scale == AttentionForm::kQueryAndKeyMul) { // PyTorch's scaled_dot_product_attention export
        g.node("Mul", {"q", "root4"}, {"qs"});
        g.node("Mul", {"kt", "root4"}, {"kts"});
        q = "qs";
        kt = "kts";
    }
    g.node("MatMul", {q, kt}, {"s"});
    std::string scores = "s";
    if (f.scale == AttentionForm::kScoresDiv) {
        g.node("Div", {"s", "sqrt_d"}, {"ss"});
        scores = "ss";
    }
    if (!f.mask.empty()) {
        g.init("mask", random_f32(f.mask, 77, -2.f, 0.f));
        g.node("Add", {scores, "mask"}, {"sm"});
        scores = "sm";
    }
    if (f.scale == AttentionForm::kScoresAfterMask) {
        g.node("Div", {scores, "sqrt_d"}, {"sd"});
        scores = "sd";
    }
    OnnxGraph::attr_int(g.node("Softmax", {scores}, {"p"}), "axis", f.softmax_axis);
    g.node("MatMul", {"p", "v"}, {"y"});
    g.output("y", static_cast<int>(f.q.size() == 1 ? f.v.size() - 1 : std::max(f.q.size(), f.v.size())));
    if (f.scores_are_output) g.output("s", static_cast<int>(f.q.size()));
    return g;
}

Both run_attention_form(const AttentionForm& f)
{
    return load_both(attention_model(f), {{"q", random_f32(f.q, 31)}, {"k", random_f32(f.k, 32)}, {"v", random_f32(f.v, 33)}});
}

TEST(FuseAttention, ExportedFormsBecomeSdpa)
{
    std::vector<AttentionForm> forms(5);
    forms[1].scale = AttentionForm::kQueryAndKeyMul;
    forms[1].mask = {5, 7};
    forms[2].softmax_axis = 3;
    forms[2].mask = {3, 1, 7};
    // PyTorch's MultiheadAttention: (L, batch * heads, E) and K^T by perm [1, 2, 0].
    forms[3].q = {6, 5, 8};
    forms[3].k = {7, 6, 8};
    forms[3].v = {6, 7, 4};
    forms[3].key_perm = {1, 2, 0};
    // Broadcast batch axes, as MatMul broadcasts them.
    forms[4].q = {5, 8};
    forms[4].v = {1, 3, 7, 4};
    for (size_t i = 0; i < forms.size(); ++i) {
        SCOPED_TRACE("form " + std::to_string(i));
        const Both r = run_attention_form(forms[i]);
        const std::vector<std::string> expected =
            forms[i].key_perm == std::vector<int64_t>{0, 1, 3, 2} ? std::vector<std::string>{"SDPA"}
                                                                  : std::vector<std::string>{"Permute", "SDPA"};
        EXPECT_EQ(compute_layers(r.optimized), expected);
        EXPECT_EQ(count_layers(r.plain, "SDPA"), 0);
        expect_close_to_reference(r.optimized_out, r.plain_out, 1e-5);
    }
}

TEST(FuseAttention, NotExactFormsAreLeftAlone)
{
    std::vector<AttentionForm> forms(5);
    forms[0].scores_are_output = true;                // an intermediate is a graph output
    forms[1].softmax_axis = -2;                       // not over the keys
    forms[2].scale = AttentionForm::kScoresAfterMask; // (scores + mask) / c scales the mask too
    forms[2].mask = {5, 7};
    forms[3].q = {2, 3, 1, 8}; // a mask with more rows than the scores widens them
    forms[3].mask = {4, 7};
    forms[4].q = {8}; // a vector query: MatMul treats it specially
    forms[4].k = {7, 8};
    forms[4].v = {7, 4};
    forms[4].key_perm = {1, 0};
    for (size_t i = 0; i < forms.size(); ++i) {
        SCOPED_TRACE("form " + std::to_string(i));
        const Both r = run_attention_form(forms[i]);
        EXPECT_EQ(count_layers(r.optimized, "SDPA"), 0);
        EXPECT_EQ(count_layers(r.optimized, "Softmax"), 1);
        expect_close_to_reference(r.optimized_out, r.plain_out, 0);
    }
}

// ---- tiny_vit (PyTorch export) ----------------------------------------------------------------

TEST(OnnxOptimize, TinyVitPatternsFuseAndStillMatchPyTorch)
{
    const std::string dir = testing::shared_path("models/tiny_vit/");
    Net optimized, plain;
    load_onnx(optimized, dir + "model.onnx");
    OnnxImportOptions off;
    off.optimize = false;
    load_onnx(plain, dir + "model.onnx", off);
    EXPECT_EQ(count_layers(optimized, "LayerNorm"), 5); // 2 blocks x 2 + the final one
    EXPECT_EQ(count_layers(optimized, "GELU"), 2);
    EXPECT_EQ(count_layers(optimized, "SDPA"), 2); // one attention per block
    EXPECT_EQ(count_layers(optimized, "Softmax"), 0);
    EXPECT_EQ(count_layers(optimized, "UnaryOp"), 0); // no Erf left
    EXPECT_EQ(count_layers(optimized, "Reduction"), 0);
    EXPECT_GE(count_layers(optimized, "InnerProduct"), count_layers(plain, "InnerProduct") + 6); // the MatMul+Add pairs
    const Tensor input = read_npy(dir + "input.npy");
    const Tensor a = run_net(optimized, {{optimized.input_names().at(0), input}}, optimized.output_names().at(0));
    const Tensor b = run_net(plain, {{plain.input_names().at(0), input}}, plain.output_names().at(0));
    expect_close_to_reference(a, read_npy(dir + "output.npy"), 1e-4);
    expect_close_to_reference(a, b, 1e-5);
}

#endif // KESTREL_HAVE_ONNX

} // namespace
} // namespace kestrel
