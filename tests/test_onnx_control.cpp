// ONNX If: branches become sub-networks carried by the If layer
// (src/ops/control/if.cpp, src/frontend/onnx/convert_control.cpp). Expectations are
// computed here element by element from the branch formulas.
#include <cmath>

#include "layer_test_util.h"
#include "onnx_test_graph.h"

#ifdef KESTREL_HAVE_ONNX
namespace kestrel {
namespace {

using layer_test::OnnxGraph;

constexpr int kBool = onnx::TensorProto::BOOL;

Tensor bool_scalar(bool v)
{
    Tensor t({}, DType::Bool);
    t.data<uint8_t>()[0] = v ? 1 : 0;
    return t;
}

// y = If(c): then x + w (2x3; w an initializer of the outer graph), else
// If(c2): then concat(x, x) * k (4x3), else concat(x, x) - w. z = Relu(y).
// The branches read x, w, k and c2 from the enclosing scopes.
OnnxGraph nested_if_model()
{
    OnnxGraph then_branch(13);
    then_branch.node("Add", {"x", "w"}, {"t"});
    then_branch.output("t", 2);

    OnnxGraph inner_then(13), inner_else(13);
    inner_then.node("Mul", {"cat", "k"}, {"p"});
    inner_then.output("p", 2);
    inner_else.node("Sub", {"cat", "w"}, {"q"});
    inner_else.output("q", 2);
    OnnxGraph else_branch(13);
    OnnxGraph::attr_int(else_branch.node("Concat", {"x", "x"}, {"cat"}), "axis", 0);
    onnx::NodeProto* inner = else_branch.node("If", {"c2"}, {"e"});
    OnnxGraph::attr_graph(inner, "then_branch", inner_then);
    OnnxGraph::attr_graph(inner, "else_branch", inner_else);
    else_branch.output("e", 2);

    OnnxGraph g(13);
    g.input("x", {2, 3});
    g.input("k", {3});
    g.input("c", {}, kBool);
    g.input("c2", {}, kBool);
    g.init("w", layer_test::f32({3}, {1.f, 2.f, 3.f}));
    onnx::NodeProto* outer = g.node("If", {"c"}, {"y"});
    OnnxGraph::attr_graph(outer, "then_branch", then_branch);
    OnnxGraph::attr_graph(outer, "else_branch", else_branch);
    g.node("Relu", {"y"}, {"z"});
    g.output("z", 2);
    return g;
}

std::vector<float> expected_z(const std::vector<float>& x, const std::vector<float>& k, bool c, bool c2)
{
    const float w[3] = {1.f, 2.f, 3.f};
    std::vector<float> z;
    const int rows = c ? 2 : 4;
    for (int r = 0; r < rows; ++r)
        for (int j = 0; j < 3; ++j) {
            const float v = x[(r % 2) * 3 + j];
            const float y = c ? v + w[j] : c2 ? v * k[j] : v - w[j];
            z.push_back(std::max(y, 0.f));
        }
    return z;
}

void expect_branches(const Net& net, const std::string& what)
{
    const std::vector<float> x = {-1.f, 0.5f, 2.f, -3.f, 4.f, -0.25f}, k = {2.f, -1.f, 0.5f};
    Session s(net);
    s.set_input("x", layer_test::f32({2, 3}, x));
    s.set_input("k", layer_test::f32({3}, k));
    // One session, the condition flipping between runs: shapes change with the branch.
    for (const auto& [c, c2] : std::vector<std::pair<bool, bool>>{{true, false}, {false, true}, {false, false}, {true, true}}) {
        s.set_input("c", bool_scalar(c));
        s.set_input("c2", bool_scalar(c2));
        const Tensor z = s.get("z");
        const std::vector<float> want = expected_z(x, k, c, c2);
        ASSERT_EQ(z.shape(), (Shape{c ? 2 : 4, 3})) << what << " c=" << c << " c2=" << c2;
        for (size_t i = 0; i < want.size(); ++i)
            EXPECT_EQ(z.data<float>()[i], want[i]) << what << " c=" << c << " c2=" << c2 << " i=" << i;
    }
}

TEST(OnnxIf, NestedBranchesReadOuterValuesAndChangeShapes)
{
    const OnnxGraph g = nested_if_model();
    expect_branches(g.load(true), "optimized");
    expect_branches(g.load(false), "unoptimized");
}

// The If layer carries its branches as .param text and .bin bytes: a written
// and re-read net computes the same.
TEST(OnnxIf, BranchesSurviveParamAndBinRoundTrip)
{
    const Net net = nested_if_model().load(true);
    const std::string text = net.param_text();
    EXPECT_NE(text.find("\nIf "), std::string::npos) << text;
    const std::vector<uint8_t> bin = net.model_bytes();
    Net reloaded;
    reloaded.load_param_mem(text, "if.param");
    reloaded.load_model_mem(bin.data(), bin.size(), "if.bin");
    expect_branches(reloaded, "reloaded");
}

// A condition known while converting picks the branch's shapes while planning.
TEST(OnnxIf, ConstantConditionGivesStaticShapes)
{
    OnnxGraph then_branch(13), else_branch(13);
    then_branch.node("Neg", {"x"}, {"t"});
    then_branch.output("t", 1);
    OnnxGraph::attr_int(else_branch.node("Concat", {"x", "x"}, {"e"}), "axis", 0);
    else_branch.output("e", 1);
    OnnxGraph g(13);
    g.input("x", {3});
    g.raw_init("c", bool_scalar(false), kBool);
    onnx::NodeProto* node = g.node("If", {"c"}, {"y"});
    OnnxGraph::attr_graph(node, "then_branch", then_branch);
    OnnxGraph::attr_graph(node, "else_branch", else_branch);
    g.output("y", 1);
    const Net net = g.load(true);
    Session s(net);
    s.set_input("x", layer_test::f32({3}, {1.f, 2.f, 3.f}));
    const Tensor y = s.get("y");
    ASSERT_EQ(y.shape(), (Shape{6}));
    for (int i = 0; i < 6; ++i) EXPECT_EQ(y.data<float>()[i], static_cast<float>(i % 3 + 1));
}

TEST(OnnxIf, BadBranchesAndNestingAreErrors)
{
    // A branch with two outputs for a node with one.
    OnnxGraph two(13), one(13);
    two.node("Neg", {"x"}, {"a"});
    two.node("Abs", {"x"}, {"b"});
    two.output("a", 1);
    two.output("b", 1);
    one.node("Neg", {"x"}, {"a"});
    one.output("a", 1);
    OnnxGraph g(13);
    g.input("x", {3});
    g.input("c", {}, kBool);
    onnx::NodeProto* node = g.node("If", {"c"}, {"y"});
    OnnxGraph::attr_graph(node, "then_branch", two);
    OnnxGraph::attr_graph(node, "else_branch", one);
    g.output("y", 1);
    std::string msg = layer_test::error_of([&] { g.load(true); });
    EXPECT_TRUE(layer_test::contains(msg, "If")) << msg;

    // 20 Ifs nested in each other's then branches; and 40 Ifs side by side.
    OnnxGraph leaf(13);
    leaf.node("Neg", {"x"}, {"y"});
    leaf.output("y", 1);
    OnnxGraph body = leaf;
    for (int depth = 0; depth < 20; ++depth) {
        OnnxGraph outer(13);
        if (depth == 19) {
            outer.input("x", {3});
            outer.input("c", {}, kBool);
        }
        onnx::NodeProto* n = outer.node("If", {"c"}, {"y"});
        OnnxGraph::attr_graph(n, "then_branch", body);
        OnnxGraph::attr_graph(n, "else_branch", leaf);
        outer.output("y", 1);
        body = outer;
    }
    // The bounds are options: a model past one is refused naming it, and loads once it is raised.
    OnnxImportOptions shallow;
    shallow.max_nesting_depth = 16;
    msg = layer_test::error_of([&] { body.load(true, shallow); });
    EXPECT_TRUE(layer_test::contains(msg, "deeper than 16 levels")) << msg;
    EXPECT_TRUE(layer_test::contains(msg, "max_nesting_depth")) << msg;
    EXPECT_NO_THROW(body.load(true));
    OnnxGraph wide(13);
    wide.input("x", {3});
    wide.input("c", {}, kBool);
    std::string last = "x";
    for (int i = 0; i < 40; ++i) {
        OnnxGraph neg(13);
        neg.node("Neg", {last}, {"n" + std::to_string(i)});
        neg.output("n" + std::to_string(i), 1);
        onnx::NodeProto* n = wide.node("If", {"c"}, {"y" + std::to_string(i)});
        OnnxGraph::attr_graph(n, "then_branch", neg);
        OnnxGraph::attr_graph(n, "else_branch", neg);
        last = "y" + std::to_string(i);
    }
    wide.output(last, 1);
    OnnxImportOptions fewer;
    fewer.max_subgraphs = 32;
    msg = layer_test::error_of([&] { wide.load(true, fewer); });
    EXPECT_TRUE(layer_test::contains(msg, "more than 32 subgraphs")) << msg;
    EXPECT_TRUE(layer_test::contains(msg, "max_subgraphs")) << msg;
    EXPECT_NO_THROW(wide.load(true));
    OnnxImportOptions small;
    small.max_nodes = 30;
    msg = layer_test::error_of([&] { wide.load(true, small); });
    EXPECT_TRUE(layer_test::contains(msg, "more than 30 nodes")) << msg;

    // An If layer whose declared branch sizes the .bin does not hold.
    Net net;
    net.load_param_mem("7767517\n3 3\nInput c 0 1 c\nInput x 0 1 x\nIf if0 2 1 c x y 0=100 1=0 2=100 3=0\n", "if.param");
    const std::vector<uint8_t> few(8, 0);
    msg = layer_test::error_of([&] { net.load_model_mem(few.data(), few.size(), "if.bin"); });
    EXPECT_TRUE(layer_test::contains(msg, "if0")) << msg;
    // Zero weights (benchmarking a structure) leave no branch text to read.
    Net zeros;
    zeros.load_param_mem("7767517\n3 3\nInput c 0 1 c\nInput x 0 1 x\nIf if0 2 1 c x y 0=100 1=0 2=100 3=0\n", "if.param");
    msg = layer_test::error_of([&] { zeros.load_model_zeros(); });
    EXPECT_TRUE(layer_test::contains(msg, "holds zero bytes")) << msg;
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_ONNX
