// ONNX's training optimizers (ai.onnx.preview.training Adagrad, Momentum,
// Adam -> OptimizerStep) in float64 past the first step (T > 0: learning-rate
// decay, bias correction, beta), two tensors per node, against the update
// rules of the operator spec written out here element by element.
#include <random>

#include "layer_test_util.h"
#include "onnx_test_graph.h"

#ifdef KESTREL_HAVE_ONNX
namespace kestrel {
namespace {

using layer_test::OnnxGraph;
constexpr int kDouble = onnx::TensorProto::DOUBLE;
constexpr char kTraining[] = "ai.onnx.preview.training";

Tensor f64(const std::vector<double>& v)
{
    Tensor t({static_cast<int64_t>(v.size())}, DType::F64);
    std::copy(v.begin(), v.end(), t.data<double>());
    return t;
}

struct OptimizerRun {
    std::string op;
    int states;
    std::vector<std::pair<std::string, float>> floats;
    std::string mode;
};

// Runs `op` over two tensors (sizes 3 and 5) of random values; returns the outputs.
std::vector<Tensor> run_optimizer(const OptimizerRun& run, double r, int64_t t, const std::vector<std::vector<double>>& inputs)
{
    OnnxGraph g(13);
    g.import_domain(kTraining, 1);
    g.input("R", {}, kDouble);
    g.input("T", {}, onnx::TensorProto::INT64);
    std::vector<std::string> ins = {"R", "T"}, outs;
    for (size_t k = 0; k < inputs.size(); ++k) {
        ins.push_back("in" + std::to_string(k));
        g.input(ins.back(), {static_cast<int64_t>(inputs[k].size())}, kDouble);
    }
    for (int k = 0; k < 2 * (1 + run.states); ++k) outs.push_back("out" + std::to_string(k));
    onnx::NodeProto* n = g.node(run.op, ins, outs);
    n->set_domain(kTraining);
    for (const auto& f : run.floats) OnnxGraph::attr_float(n, f.first, f.second);
    if (!run.mode.empty()) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name("mode");
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s(run.mode);
    }
    for (const std::string& o : outs) g.output(o, 1, kDouble);
    const Net net = g.load(false);
    Session session(net);
    session.set_input("R", [&] { Tensor x({}, DType::F64); x.data<double>()[0] = r; return x; }());
    session.set_input("T", layer_test::i64({}, {t}));
    for (size_t k = 0; k < inputs.size(); ++k) session.set_input(ins[2 + k], f64(inputs[k]));
    return session.run(outs);
}

TEST(OnnxTraining, OptimizersFollowTheirUpdateRules)
{
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> u(-2, 2), pos(0.1, 3);
    const double r = 0.05, c = 0.01, eps = 1e-3, decay = 0.2, alpha = 0.9, beta = 0.7;
    const int64_t t = 3;
    const std::vector<OptimizerRun> runs = {
        {"Adagrad", 1, {{"norm_coefficient", c}, {"epsilon", eps}, {"decay_factor", decay}}, ""},
        {"Momentum", 1, {{"norm_coefficient", c}, {"alpha", alpha}, {"beta", beta}}, "standard"},
        {"Momentum", 1, {{"norm_coefficient", c}, {"alpha", alpha}, {"beta", beta}}, "nesterov"},
        {"Adam", 2, {{"norm_coefficient", c}, {"epsilon", eps}, {"alpha", alpha}, {"beta", beta}, {"norm_coefficient_post", 0.05f}}, ""},
    };
    for (const OptimizerRun& run : runs) {
        const size_t sizes[2] = {3, 5};
        std::vector<std::vector<double>> in; // X1 X2 G1 G2 S1 S2 (S'1 S'2)
        for (int k = 0; k < 2 + run.states; ++k)
            for (size_t size : sizes) {
                std::vector<double> v(size);
                for (double& e : v) e = k >= 2 ? pos(rng) : u(rng); // states (accumulated squares) positive
                in.push_back(v);
            }
        const std::vector<Tensor> out = run_optimizer(run, r, t, in);
        // The attributes travel as float32: the reference uses the same values.
        const double fc = float(c), fe = float(eps), fd = float(decay), fa = float(alpha), fb = float(beta), fp = float(0.05f);
        for (int i = 0; i < 2; ++i)
            for (size_t e = 0; e < sizes[i]; ++e) {
                const double x = in[i][e], g = in[2 + i][e] + fc * x, s = in[4 + i][e];
                double want_x = 0, want_s = 0, want_h = 0;
                if (run.op == "Adagrad") {
                    want_s = s + g * g;
                    want_x = x - r / (1 + t * fd) * g / (std::sqrt(want_s) + fe);
                } else if (run.op == "Momentum") {
                    want_s = fa * s + fb * g;
                    want_x = x - r * (run.mode == "standard" ? want_s : g + fa * want_s);
                } else {
                    const double h = in[6 + i][e];
                    want_s = fa * s + (1 - fa) * g;
                    want_h = fb * h + (1 - fb) * g * g;
                    const double rate = r * std::sqrt(1 - std::pow(fb, t)) / (1 - std::pow(fa, t));
                    want_x = (1 - fp) * (x - rate * want_s / (std::sqrt(want_h) + fe));
                    EXPECT_NEAR(out[4 + i].data<double>()[e], want_h, 1e-12);
                }
                EXPECT_NEAR(out[i].data<double>()[e], want_x, 1e-12) << run.op << run.mode;
                EXPECT_NEAR(out[2 + i].data<double>()[e], want_s, 1e-12) << run.op << run.mode;
            }
    }
}

TEST(OnnxTraining, MismatchedStateIsAnError)
{
    const std::string msg = layer_test::error_of([] {
        run_optimizer({"Adagrad", 1, {}, ""}, 0.1, 0, {{1, 2}, {1, 2, 3}, {1, 2}, {1, 2, 3}, {1, 2}, {1, 2}});
    });
    EXPECT_TRUE(layer_test::contains(msg, "must match X2")) << msg;
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_ONNX
