// Graph shapes that could exhaust a naive loader: cycles are rejected with a
// clear error; very deep graphs and deeply nested ONNX subgraphs neither
// overflow the stack nor hang.
#include "layer_test_util.h"

namespace kestrel {
namespace {

using layer_test::contains;
using layer_test::error_of;

onnx::ValueInfoProto* add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                                const std::string& name)
{
    onnx::ValueInfoProto* vi = list->Add();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(4);
    return vi;
}

onnx::ModelProto model_with_graph()
{
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    m.mutable_graph()->set_name("g");
    add_value(m.mutable_graph()->mutable_input(), "x");
    return m;
}

void add_node(onnx::GraphProto* g, const std::string& type, const std::vector<std::string>& ins,
              const std::string& out)
{
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(type);
    for (const auto& i : ins) n->add_input(i);
    n->add_output(out);
}

std::string load_error(const onnx::ModelProto& m)
{
    const std::string bytes = m.SerializeAsString();
    return error_of([&] {
        Net net;
        load_onnx_mem(net, bytes.data(), bytes.size(), "bad.onnx");
    });
}

TEST(BadGraphs, OnnxCycleIsRejected)
{
    onnx::ModelProto m = model_with_graph();
    onnx::GraphProto* g = m.mutable_graph();
    add_node(g, "Add", {"x", "b"}, "a"); // b is produced only after a
    add_node(g, "Relu", {"a"}, "b");
    add_value(g->mutable_output(), "b");
    const std::string e = load_error(m);
    EXPECT_TRUE(contains(e, "bad.onnx")) << e;
    EXPECT_TRUE(contains(e, "has a cycle through node")) << e;
    EXPECT_TRUE(contains(e, "output 'a'") || contains(e, "output 'b'")) << e;
}

// Nodes out of order (a converter wrote the input's Cast last) are sorted, as ONNX Runtime does.
TEST(BadGraphs, OnnxNodesOutOfOrderAreSorted)
{
    onnx::ModelProto m = model_with_graph();
    onnx::GraphProto* g = m.mutable_graph();
    add_node(g, "Relu", {"a"}, "b");
    add_node(g, "Neg", {"x"}, "a");
    add_value(g->mutable_output(), "b");
    const std::string bytes = m.SerializeAsString();
    Net net;
    load_onnx_mem(net, bytes.data(), bytes.size(), "unsorted.onnx");
    Session s(net);
    Tensor x({4}, DType::F32);
    const float values[4] = {-1.f, 2.f, -3.f, 4.f};
    std::copy(values, values + 4, x.data<float>());
    s.set_input("x", x);
    const Tensor b = s.run({"b"})[0]; // Relu(Neg(x))
    ASSERT_EQ(b.numel(), 4);
    EXPECT_EQ(std::vector<float>(b.data<float>(), b.data<float>() + 4), std::vector<float>({1.f, 0.f, 3.f, 0.f}));
}

TEST(BadGraphs, NcnnCycleIsRejected)
{
    Net net;
    const std::string e = error_of([&] {
        net.load_param_mem("7767517\n3 3\nInput in 0 1 x\nBinaryOp add 2 1 x b a 0=0\nReLU relu 1 1 a b\n");
    });
    EXPECT_TRUE(contains(e, "'b'")) << e;
    EXPECT_TRUE(contains(e, "not produced")) << e;
}

// If-nodes nested inside each other's then_branch, deeper than protobuf's
// recursion limit: a clean parse error, not a stack overflow.
TEST(BadGraphs, DeeplyNestedOnnxSubgraphsAreRejected)
{
    onnx::ModelProto m = model_with_graph();
    onnx::GraphProto* g = m.mutable_graph();
    for (int depth = 0; depth < 5000; ++depth) {
        onnx::NodeProto* n = g->add_node();
        n->set_op_type("If");
        n->add_input("x");
        n->add_output("y");
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name("then_branch");
        a->set_type(onnx::AttributeProto::GRAPH);
        g = a->mutable_g();
        g->set_name("branch" + std::to_string(depth));
    }
    add_value(m.mutable_graph()->mutable_output(), "y");
    const std::string e = load_error(m);
    EXPECT_TRUE(contains(e, "bad.onnx")) << e;
    EXPECT_TRUE(contains(e, "parse failed")) << e;
}

// A 20000-layer chain loads, plans and runs: no recursion over the graph.
TEST(BadGraphs, VeryDeepChainRuns)
{
    std::string param = "7767517\n20001 20001\nInput in 0 1 b0 0=4\n";
    for (int i = 0; i < 20000; ++i)
        param += "BinaryOp add" + std::to_string(i) + " 1 1 b" + std::to_string(i) + " b" + std::to_string(i + 1) +
                 " 0=0 1=1 2=1.0\n";
    Net net;
    net.load_param_mem(param);
    Session s(net);
    s.set_input("b0", layer_test::f32({4}, {0.f, 1.f, 2.f, 3.f}));
    const Tensor y = s.get("b20000");
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y.data<float>()[i], 20000.f + static_cast<float>(i));
}

} // namespace
} // namespace kestrel
