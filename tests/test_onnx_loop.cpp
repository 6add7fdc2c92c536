// ONNX Loop and Scan: bodies become sub-networks carried by our Loop and Scan
// layers (src/ops/control/{loop,scan}.cpp, src/frontend/onnx/convert_control.cpp).
// Expectations are computed here by running the bodies' formulas in plain loops.
#include <cmath>

#include "layer_test_util.h"
#include "onnx_test_graph.h"

#ifdef KESTREL_HAVE_ONNX
namespace kestrel {
namespace {

using layer_test::OnnxGraph;

constexpr int kBool = onnx::TensorProto::BOOL, kInt64 = onnx::TensorProto::INT64;

Tensor bool_scalar(bool v)
{
    Tensor t({}, DType::Bool);
    t.data<uint8_t>()[0] = v ? 1 : 0;
    return t;
}

// Loop(M, cond, s, acc) with a body that reads x and limit from outside:
//   u = x * float(i); s' = concat(s, u) (grows by one each iteration);
//   acc' = acc + u; cond' = acc' < limit; scan output: acc'.
// has_m / has_cond: whether the node gives the trip count / the condition.
OnnxGraph loop_model(bool has_m, bool has_cond)
{
    OnnxGraph body(13);
    body.input("i", {}, kInt64);
    body.input("cond_in", {}, kBool);
    body.input("s_in", {-1});
    body.input("acc_in", {1});
    OnnxGraph::attr_int(body.node("Cast", {"i"}, {"t"}), "to", onnx::TensorProto::FLOAT);
    body.node("Mul", {"x", "t"}, {"u"});
    OnnxGraph::attr_int(body.node("Concat", {"s_in", "u"}, {"s_out"}), "axis", 0);
    body.node("Add", {"acc_in", "u"}, {"acc_out"});
    body.node("Less", {"acc_out", "limit"}, {"less"});
    body.int64s("axis0", {0});
    body.node("Squeeze", {"less", "axis0"}, {"cond_out"}); // [1] -> a scalar
    body.node("Identity", {"acc_out"}, {"acc_scan"});
    body.output("cond_out", 0, kBool);
    body.output("s_out", 1);
    body.output("acc_out", 1);
    body.output("acc_scan", 1);

    OnnxGraph g(13);
    if (has_m) g.input("M", {}, kInt64);
    if (has_cond) g.input("cond", {}, kBool);
    g.input("s0", {-1});
    g.input("acc0", {1});
    g.input("x", {1});
    g.input("limit", {});
    onnx::NodeProto* loop = g.node("Loop", {has_m ? "M" : "", has_cond ? "cond" : "", "s0", "acc0"},
                                   {"s_final", "acc_final", "accs"});
    OnnxGraph::attr_graph(loop, "body", body);
    g.output("s_final", 1);
    g.output("acc_final", 1);
    g.output("accs", 2);
    return g;
}

struct LoopCase {
    int64_t m;     // -1: no trip count
    int cond;      // -1: no condition, else its initial value
    float limit;
};

void expect_loop(const Net& net, const LoopCase& c, const std::string& what)
{
    const std::vector<float> s0 = {0.5f, -1.f};
    const float x = 1.5f;
    // The reference: the body's formulas in a plain loop.
    std::vector<float> s = s0, accs;
    float acc = 2.f;
    bool cond = c.cond != 0;
    for (int64_t i = 0; (c.m < 0 || i < c.m) && cond; ++i) {
        const float u = x * static_cast<float>(i);
        s.push_back(u);
        acc += u;
        cond = acc < c.limit;
        accs.push_back(acc);
    }
    Session session(net);
    if (c.m >= 0) session.set_input("M", layer_test::i64({}, {c.m}));
    if (c.cond >= 0) session.set_input("cond", bool_scalar(c.cond != 0));
    session.set_input("s0", layer_test::f32({2}, s0));
    session.set_input("acc0", layer_test::f32({1}, {2.f}));
    session.set_input("x", layer_test::f32({1}, {x}));
    session.set_input("limit", layer_test::f32({}, {c.limit}));
    const std::vector<Tensor> out = session.run({"s_final", "acc_final", "accs"});
    const std::string at = what + " m=" + std::to_string(c.m) + " cond=" + std::to_string(c.cond) +
                           " limit=" + std::to_string(c.limit);
    ASSERT_EQ(out[0].shape(), (Shape{static_cast<int64_t>(s.size())})) << at;
    for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(out[0].data<float>()[i], s[i]) << at << " s[" << i << "]";
    ASSERT_EQ(out[1].shape(), (Shape{1})) << at;
    EXPECT_EQ(out[1].data<float>()[0], acc) << at;
    ASSERT_EQ(out[2].shape(), (Shape{static_cast<int64_t>(accs.size()), 1})) << at;
    for (size_t i = 0; i < accs.size(); ++i) EXPECT_EQ(out[2].data<float>()[i], accs[i]) << at << " accs[" << i << "]";
}

// A trip count and a data-dependent condition; carried values that change
// shape every iteration; scan outputs stacked; values read from outside.
TEST(OnnxLoop, TripCountAndConditionCarryGrowingValues)
{
    for (bool optimize : {true, false}) {
        const Net net = loop_model(true, true).load(optimize);
        const std::string what = optimize ? "optimized" : "unoptimized";
        for (const LoopCase& c : {LoopCase{6, 1, 1000.f}, LoopCase{6, 1, 9.f}, LoopCase{0, 1, 1000.f},
                                  LoopCase{6, 0, 1000.f}, LoopCase{1, 1, 0.f}})
            expect_loop(net, c, what);
    }
}

TEST(OnnxLoop, TripCountOrConditionAlone)
{
    expect_loop(loop_model(false, true).load(true), LoopCase{-1, 1, 20.f}, "condition only");
    expect_loop(loop_model(true, false).load(true), LoopCase{5, -1, 0.f}, "trip count only");
}

// A condition that never turns false with no trip count to bound it (none,
// or PyTorch's INT64_MAX): an error after 2^20 iterations, not a hang.
TEST(OnnxLoop, UnboundedLoopStopsWithAnError)
{
    OnnxGraph body(13);
    body.input("i", {}, kInt64);
    body.input("c", {}, kBool);
    body.input("v", {1});
    body.node("Identity", {"c"}, {"c_out"});
    body.node("Neg", {"v"}, {"v_out"});
    body.output("c_out", 0, kBool);
    body.output("v_out", 1);
    OnnxGraph g(13);
    g.input("M", {}, kInt64);
    g.input("cond", {}, kBool);
    g.input("v0", {1});
    OnnxGraph::attr_graph(g.node("Loop", {"M", "cond", "v0"}, {"v_final"}), "body", body);
    g.output("v_final", 1);
    const Net net = g.load(true);
    Session session(net);
    session.set_input("M", layer_test::i64({}, {INT64_MAX}));
    session.set_input("cond", bool_scalar(true));
    session.set_input("v0", layer_test::f32({1}, {1.f}));
    const std::string msg = layer_test::error_of([&] { session.run({"v_final"}); });
    EXPECT_TRUE(layer_test::contains(msg, "1048576 iterations")) << msg;
}

TEST(OnnxLoop, BodySurvivesParamAndBinRoundTrip)
{
    const Net net = loop_model(true, true).load(true);
    const std::string text = net.param_text();
    EXPECT_NE(text.find("\nLoop "), std::string::npos) << text;
    const std::vector<uint8_t> bin = net.model_bytes();
    Net reloaded;
    reloaded.load_param_mem(text, "loop.param");
    reloaded.load_model_mem(bin.data(), bin.size(), "loop.bin");
    expect_loop(reloaded, LoopCase{6, 1, 9.f}, "reloaded");
}

// Scan (opset 9+): state h; scan inputs a (3x2, axis 0, forward) and b (2x3,
// axis 1, reversed); body h' = h + a_t * b_t, y = h' - a_t; y stacked along
// axis 1, reversed, and y2 = h' along axis 0.
TEST(OnnxScan, AxesAndDirectionsPerInputAndOutput)
{
    OnnxGraph body(16);
    body.input("h", {2});
    body.input("a_t", {2});
    body.input("b_t", {2});
    body.node("Mul", {"a_t", "b_t"}, {"p"});
    body.node("Add", {"h", "p"}, {"h2"});
    body.node("Sub", {"h2", "a_t"}, {"y"});
    body.node("Identity", {"h2"}, {"y2"});
    body.output("h2", 1);
    body.output("y", 1);
    body.output("y2", 1);
    OnnxGraph g(16);
    g.input("h0", {2});
    g.input("a", {3, 2});
    g.input("b", {2, 3});
    onnx::NodeProto* scan = g.node("Scan", {"h0", "a", "b"}, {"h_final", "ys", "y2s"});
    OnnxGraph::attr_graph(scan, "body", body);
    OnnxGraph::attr_int(scan, "num_scan_inputs", 2);
    OnnxGraph::attr_ints(scan, "scan_input_axes", {0, -1});
    OnnxGraph::attr_ints(scan, "scan_input_directions", {0, 1});
    OnnxGraph::attr_ints(scan, "scan_output_axes", {1, 0});
    OnnxGraph::attr_ints(scan, "scan_output_directions", {1, 0});
    g.output("h_final", 1);
    g.output("ys", 2);
    g.output("y2s", 2);
    const std::vector<float> h0 = {1.f, -2.f}, a = {1, 2, 3, 4, 5, 6}, b = {0.5f, -1, 2, 3, 0.25f, -4};
    // Reference: a_t = a[t, :], b_t = b[:, 2 - t]; ys[:, 2 - t] = y_t; y2s[t, :] = h_t.
    float h[2] = {h0[0], h0[1]}, ys[2][3], y2s[3][2];
    for (int t = 0; t < 3; ++t)
        for (int j = 0; j < 2; ++j) {
            const float at = a[t * 2 + j], bt = b[j * 3 + (2 - t)];
            h[j] = h[j] + at * bt;
            ys[j][2 - t] = h[j] - at;
            y2s[t][j] = h[j];
        }
    for (bool optimize : {true, false}) {
        const Net net = g.load(optimize);
        Session s(net);
        s.set_input("h0", layer_test::f32({2}, h0));
        s.set_input("a", layer_test::f32({3, 2}, a));
        s.set_input("b", layer_test::f32({2, 3}, b));
        const std::vector<Tensor> out = s.run({"h_final", "ys", "y2s"});
        ASSERT_EQ(out[0].shape(), (Shape{2}));
        ASSERT_EQ(out[1].shape(), (Shape{2, 3}));
        ASSERT_EQ(out[2].shape(), (Shape{3, 2}));
        for (int j = 0; j < 2; ++j) EXPECT_EQ(out[0].data<float>()[j], h[j]) << j;
        for (int j = 0; j < 2; ++j)
            for (int t = 0; t < 3; ++t) {
                EXPECT_EQ(out[1].data<float>()[j * 3 + t], ys[j][t]) << j << "," << t;
                EXPECT_EQ(out[2].data<float>()[t * 2 + j], y2s[t][j]) << t << "," << j;
            }
    }
}

// Scan's opset-8 form: a batch axis first, each item scanned alone for its
// sequence length (the scan output's later steps zeros).
TEST(OnnxScan, Opset8BatchWithSequenceLengths)
{
    OnnxGraph body(8);
    body.input("h", {1});
    body.input("x_t", {1});
    body.node("Add", {"h", "x_t"}, {"h2"});
    body.node("Identity", {"h2"}, {"y"});
    body.output("h2", 1);
    body.output("y", 1);
    OnnxGraph g(8);
    g.input("lens", {2}, onnx::TensorProto::INT32);
    g.input("h0", {2, 1});
    g.input("x", {2, 4, 1});
    onnx::NodeProto* scan = g.node("Scan", {"lens", "h0", "x"}, {"h_final", "ys"});
    OnnxGraph::attr_graph(scan, "body", body);
    OnnxGraph::attr_int(scan, "num_scan_inputs", 1);
    OnnxGraph::attr_ints(scan, "directions", {1});
    g.output("h_final", 2);
    g.output("ys", 3);
    const Net net = g.load(true);
    Session s(net);
    const std::vector<int32_t> lens = {4, 2};
    const std::vector<float> h0 = {10.f, 20.f}, x = {1, 2, 3, 4, 5, 6, 7, 8};
    s.set_input("lens", layer_test::make<int32_t>({2}, DType::I32, lens));
    s.set_input("h0", layer_test::f32({2, 1}, h0));
    s.set_input("x", layer_test::f32({2, 4, 1}, x));
    const std::vector<Tensor> out = s.run({"h_final", "ys"});
    ASSERT_EQ(out[0].shape(), (Shape{2, 1}));
    ASSERT_EQ(out[1].shape(), (Shape{2, 4, 1}));
    for (int b = 0; b < 2; ++b) {
        float h = h0[b];
        for (int t = 0; t < 4; ++t) {
            float want = 0.f;
            if (t < lens[b]) { // reversed: the item's last slice first
                h += x[b * 4 + (lens[b] - 1 - t)];
                want = h;
            }
            EXPECT_EQ(out[1].data<float>()[b * 4 + t], want) << b << "," << t;
        }
        EXPECT_EQ(out[0].data<float>()[b], h) << b;
    }
}

TEST(OnnxLoop, MalformedBodiesAreRefusedWithTheNode)
{
    OnnxGraph body(13);
    body.input("i", {}, kInt64);
    body.input("c", {}, kBool);
    body.node("Identity", {"c"}, {"c2"});
    body.output("c2", 0, kBool);
    OnnxGraph g(13);
    g.input("M", {}, kInt64);
    g.input("v", {2});
    onnx::NodeProto* loop = g.node("Loop", {"M", "", "v"}, {"v_final"});
    OnnxGraph::attr_graph(loop, "body", body);
    g.output("v_final", 1);
    const std::string msg = layer_test::error_of([&] { g.load(true); });
    EXPECT_TRUE(layer_test::contains(msg, "Loop")) << msg;
    EXPECT_TRUE(layer_test::contains(msg, "the body reads 2 inputs")) << msg;
}

} // namespace
} // namespace kestrel
#endif
