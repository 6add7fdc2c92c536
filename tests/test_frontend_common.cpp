// The front-end wing's shared toolkit (src/frontend/common/) and its one entry
// point (src/frontend/model_file.cpp): formats told from content, every
// unsupported operator in one error, the graph builder's names, constants and
// folding, and the axis-order folding TFLite and TensorFlow will use.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "frontend/common/axis_order.h"
#include "frontend/common/graph_builder.h"
#include "frontend/common/unsupported_ops.h"
#include "kestrel/model_file.h"
#include "layer_test_util.h"
#include "onnx_test_graph.h"
#include "test_helpers.h"

namespace kestrel {
namespace {

using namespace layer_test;

std::string temp_file(const std::string& name, const std::string& bytes)
{
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
}

std::string read_bytes(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A length-delimited protobuf field (one-byte lengths: short test messages).
std::string field(int number, const std::string& payload)
{
    return std::string(1, static_cast<char>(number << 3 | 2)) + static_cast<char>(payload.size()) + payload;
}

ModelFormat format_of(const std::string& bytes) { return detect_model_format(bytes.data(), bytes.size()); }

TEST(ModelFormat, ToldFromTheFirstBytes)
{
    const std::string shared = std::string(KESTREL_SHARED_DIR) + "/models/resnet18/";
    EXPECT_EQ(detect_model_format(shared + "model.onnx"), ModelFormat::Onnx);
    EXPECT_EQ(detect_model_format(shared + "ncnn.param"), ModelFormat::NcnnParam);
    EXPECT_EQ(format_of("# written by hand\n\n7767517\n1 1\n"), ModelFormat::NcnnParam);
    const int32_t magic = 7767517;
    EXPECT_EQ(format_of(std::string(reinterpret_cast<const char*>(&magic), 4) + std::string(8, '\0')),
              ModelFormat::NcnnParamBin);
    EXPECT_EQ(format_of(std::string("\x1c\0\0\0TFL3\0\0", 10)), ModelFormat::Tflite);
    EXPECT_EQ(format_of("name: \"LeNet\"\nlayer {\n  name: \"data\"\n}\n"), ModelFormat::CaffeText);
    EXPECT_EQ(format_of("layers {\n  type: CONVOLUTION\n}\n"), ModelFormat::CaffeText);
    EXPECT_EQ(format_of("node {\n  name: \"x\"\n  op: \"Placeholder\"\n}\n"), ModelFormat::TensorflowText);
    // Binary protobufs: a GraphDef's first node is a message (name, op); a
    // .caffemodel starts with the net's name (text) or its layers.
    EXPECT_EQ(format_of(field(1, field(1, "input") + field(2, "Placeholder"))), ModelFormat::TensorflowGraphDef);
    EXPECT_EQ(format_of(field(1, "LeNet") + field(100, field(1, "conv1"))), ModelFormat::CaffeBinary);
    EXPECT_EQ(format_of(std::string("\x08\x07\x12\x07pytorch", 10)), ModelFormat::Onnx);
    EXPECT_EQ(format_of(std::string("\xff\xfe\x00\x01", 4)), ModelFormat::Unknown);
    EXPECT_EQ(format_of(""), ModelFormat::Unknown);
    EXPECT_STREQ(model_format_name(ModelFormat::Tflite), "TensorFlow Lite");
}

TEST(ModelFormat, ContentWinsOverTheExtension)
{
    // An ONNX model named .param loads as ONNX wherever a path is taken.
    const std::string shared = std::string(KESTREL_SHARED_DIR) + "/models/squeezenet1_1/";
    const std::string misnamed = temp_file("squeezenet_really_onnx.param", read_bytes(shared + "model.onnx"));
    EXPECT_EQ(detect_model_format(misnamed), ModelFormat::Onnx);
    // An ncnn .param named .onnx is read as ncnn's.
    const std::string ncnn = temp_file("tiny_really_ncnn.onnx", "7767517\n2 2\nInput in 0 1 x 0=3\nAbsVal a 1 1 x y\n");
    Net net;
    const ModelFileInfo info = load_model_file(net, ncnn);
    EXPECT_EQ(info.format, ModelFormat::NcnnParam);
    EXPECT_EQ(net.output_names(), std::vector<std::string>{"y"});
    // Content that no format starts with goes to its extension's parser, which says what is wrong.
    const std::string empty = temp_file("empty.param", "");
    const std::string broken = temp_file("broken.onnx", "\xff\xff");
    EXPECT_EQ(detect_model_format(empty), ModelFormat::NcnnParam);
    EXPECT_EQ(detect_model_format(broken), ModelFormat::Onnx);
    EXPECT_EQ(detect_model_format(temp_file("broken.weights", "\xff\xff")), ModelFormat::Unknown);
    for (const std::string& p : {misnamed, ncnn, empty, broken}) std::remove(p.c_str());
}

TEST(ModelFile, NcnnModelsWithWeightsBesideOrZeros)
{
    const std::string shared = std::string(KESTREL_SHARED_DIR) + "/models/resnet18/";
    Net net;
    ModelFileOptions o;
    o.weights = shared + "ncnn.bin";
    EXPECT_EQ(load_model_file(net, shared + "ncnn.param", o).weights, shared + "ncnn.bin");
    // The zoo's structures have no weights: zeros only when asked for.
    const std::string zoo = std::string(KESTREL_SHARED_DIR) + "/zoo/squeezenet.param";
    EXPECT_TRUE(ktest::api_fails_with([&] { load_model_file(net, zoo); }, {"squeezenet.bin", "cannot open weights"}));
    o = {};
    o.zero_weights_if_missing = true;
    EXPECT_EQ(load_model_file(net, zoo, o).weights, "");
    EXPECT_FALSE(net.needs_weights());
}

TEST(ModelFile, FormatsWithoutAFrontEndAreNamed)
{
    const std::string tflite = temp_file("x.tflite", std::string("\x1c\0\0\0TFL3\0\0\0\0", 12));
    const std::string graphdef = temp_file("x.pbtxt", "node {\n  name: \"x\"\n  op: \"Placeholder\"\n}\n");
    const std::string garbage = temp_file("x.bin", std::string("\xff\xfe\x00\x01", 4));
    const std::string caffemodel = temp_file("x.caffemodel", field(1, "LeNet") + field(100, field(1, "conv1")));
    Net net;
    EXPECT_TRUE(ktest::api_fails_with([&] { load_model_file(net, graphdef); }, {graphdef, "TensorFlow GraphDef text", "no front-end"}));
    // TFLite has its front-end: a broken file reaches it and is named by it.
    EXPECT_TRUE(ktest::api_fails_with([&] { load_model_file(net, tflite); }, {tflite, "malformed TensorFlow Lite file"}));
    EXPECT_TRUE(ktest::api_fails_with([&] { load_model_file(net, garbage); }, {garbage, "not a model file"}));
    EXPECT_TRUE(ktest::api_fails_with([&] { load_model_file(net, caffemodel); }, {caffemodel, "weights only"}));
    EXPECT_TRUE(ktest::api_fails_with([&] { load_model_file(net, "/nonexistent/m.onnx"); }, {"/nonexistent/m.onnx"}));
    for (const std::string& p : {tflite, graphdef, garbage, caffemodel}) std::remove(p.c_str());
}

TEST(UnsupportedOperators, OneErrorListsEveryOne)
{
    UnsupportedOperators none;
    EXPECT_NO_THROW(none.raise_if_any("unsupported operators"));
    UnsupportedOperators one;
    one.add("node 3", "Foo", "foo_1", "m.onnx: node 'foo_1': unsupported operator type 'Foo'");
    EXPECT_TRUE(ktest::api_fails_with([&] { one.raise_if_any("unsupported operators"); }, {"'Foo'"}));
    UnsupportedOperators two = one;
    two.add("node 9", "Bar", "bar", "unused: only the first one's message is given in full");
    const std::string msg = error_of([&] { two.raise_if_any("unsupported operators"); });
    EXPECT_NE(msg.find("unsupported operator type 'Foo' (2 unsupported operators: node 3 Foo 'foo_1', node 9 Bar 'bar')"),
              std::string::npos)
        << msg;
}

#ifdef KESTREL_HAVE_ONNX
TEST(UnsupportedOperators, AnOnnxModelListsAllItsUnknownNodes)
{
    OnnxGraph g(15); // Bernoulli's first opset
    g.input("x", {2, 3});
    g.node("Relu", {"x"}, {"a"});
    g.node("Bernoulli", {"a"}, {"b"});
    g.node("Relu", {"b"}, {"c"});
    onnx::NodeProto* custom = g.node("FancyOp", {"c"}, {"y"});
    custom->set_domain("com.example");
    g.import_domain("com.example", 1);
    g.output("y", 2);
    const std::string msg = error_of([&] { g.load(true); });
    EXPECT_NE(msg.find("unsupported operator type 'Bernoulli'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("2 unsupported operators: node 1 Bernoulli 'Bernoulli_2', node 3 FancyOp 'FancyOp_4'"),
              std::string::npos)
        << msg;
}
#endif

TEST(GraphBuilder, NamesConstantsAndFolding)
{
    Net net;
    GraphBuilder b(net, "test.model");
    EXPECT_EQ(GraphBuilder::blob_name("my output/1 \"x\""), "my output/1 \"x\"");
    EXPECT_EQ(GraphBuilder::blob_name(""), "_");
    ParamDict input;
    input.set_int(0, 4);
    b.add_layer("Input", "x", {}, {"x"}, input);
    EXPECT_TRUE(b.produced("x"));
    EXPECT_EQ(b.unique_blob("x"), "x_0");
    EXPECT_EQ(b.unique_blob("x"), "x_1");

    // Folding: 2 + 3 * ones computed while converting, with the runtime's op.
    b.set_constant("two", f32({4}, {2.f, 2.f, 2.f, 2.f}));
    b.set_constant("three", f32({4}, {3.f, -3.f, 0.5f, 1.f}));
    ParamDict add; // BinaryOp 0: Add
    EXPECT_TRUE(b.fold("BinaryOp", add, {"two", "three"}, {"sum"}));
    ASSERT_NE(b.constant("sum"), nullptr);
    expect_near_all(*b.constant("sum"), {5.0, -1.0, 2.5, 3.0}, "folded sum");
    EXPECT_FALSE(b.produced("sum")) << "a folded value is no layer until read";
    // Not every input known: nothing folded.
    EXPECT_FALSE(b.fold("BinaryOp", add, {"x", "three"}, {"other"}));
    EXPECT_EQ(b.constant("other"), nullptr);

    // A constant read by a layer is emitted once, as a Constant layer.
    EXPECT_EQ(b.ensure_blob("sum", "test"), "sum");
    EXPECT_EQ(b.ensure_blob("sum", "test"), "sum");
    b.add_layer("BinaryOp", "out", {"x", "sum"}, {"y"}, add);
    net.set_output_names({"y"});
    Session s(net);
    s.set_input("x", f32({4}, {1.f, 1.f, 1.f, 1.f}));
    expect_near_all(s.get("y"), {6.0, 0.0, 3.5, 4.0}, "x + folded sum");
    EXPECT_TRUE(ktest::api_fails_with([&] { b.ensure_blob("nowhere", "node 'n'"); },
                                      {"test.model", "node 'n'", "'nowhere'", "not produced"}));
}

TEST(AxisOrder, ChannelsLastFoldsOntoTheEngineOrder)
{
    EXPECT_EQ(engine_permutation(AxisOrder::ChannelsFirst, 4), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(engine_permutation(AxisOrder::ChannelsLast, 4), (std::vector<int>{0, 3, 1, 2}));
    EXPECT_EQ(engine_permutation(AxisOrder::ChannelsLast, 3), (std::vector<int>{0, 2, 1}));
    EXPECT_EQ(engine_permutation(AxisOrder::ChannelsLast, 2), (std::vector<int>{0, 1}));
    EXPECT_EQ(engine_axis(AxisOrder::ChannelsLast, 4, 3), 1);
    EXPECT_EQ(engine_axis(AxisOrder::ChannelsLast, 4, -1), 1);
    EXPECT_EQ(engine_axis(AxisOrder::ChannelsLast, 4, 1), 2);
    EXPECT_EQ(engine_axis(AxisOrder::ChannelsFirst, 4, -1), 3);
    EXPECT_TRUE(ktest::api_fails_with([] { engine_axis(AxisOrder::ChannelsLast, 4, 4); }, {"axis 4", "rank 4"}));
    EXPECT_EQ(engine_shape(AxisOrder::ChannelsLast, {1, 5, 6, 3}), Shape({1, 3, 5, 6}));

    // Values: (N, H, W, C) -> (N, C, H, W) against a plain loop, on a shape
    // whose dims are all equal (the shape alone cannot tell it moved).
    const Tensor nhwc = random_f32({2, 2, 2, 2}, 5);
    const Tensor nchw = to_engine_order(AxisOrder::ChannelsLast, nhwc);
    std::vector<double> want;
    for (int n = 0; n < 2; ++n)
        for (int c = 0; c < 2; ++c)
            for (int h = 0; h < 2; ++h)
                for (int w = 0; w < 2; ++w) want.push_back(nhwc.data<float>()[((n * 2 + h) * 2 + w) * 2 + c]);
    expect_near_all(nchw, want, "NHWC -> NCHW");
    // int8 weights move the same way; channels first is the identity.
    Tensor q({1, 2, 3, 4}, DType::I8);
    for (int i = 0; i < 24; ++i) q.data<int8_t>()[i] = static_cast<int8_t>(i - 12);
    const Tensor moved = to_engine_order(AxisOrder::ChannelsLast, q);
    EXPECT_EQ(moved.shape(), Shape({1, 4, 2, 3}));
    EXPECT_EQ(moved.data<int8_t>()[1], q.data<int8_t>()[4]); // c 0, h 0, w 1 <- (h 0, w 1, c 0)
    EXPECT_EQ(to_engine_order(AxisOrder::ChannelsFirst, q).raw(), q.raw());
}

} // namespace
} // namespace kestrel
