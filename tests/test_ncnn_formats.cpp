// The ncnn file formats (spec §1.1-1.3) and .npy files, checked against
// expectations built here: hand-written .param text, .param.bin and .bin bytes
// laid out word by word from the spec, outputs recomputed with plain loops, and
// .npy bytes written and parsed by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kestrel/kestrel.h"
#include "test_helpers.h"

using namespace kestrel;
using ktest::Bytes;

namespace {

// ---------------------------------------------------------------------------
// Small utilities

bool same_bits(const Tensor& a, const Tensor& b)
{
    return a.shape() == b.shape() && a.dtype() == b.dtype() &&
           (a.nbytes() == 0 || std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
}

std::vector<float> values_of(const Tensor& t)
{
    const Tensor f = t.dtype() == DType::F32 ? t : t.to(DType::F32);
    return std::vector<float>(f.data<float>(), f.data<float>() + f.numel());
}

Tensor make_f32(const Shape& shape, const std::vector<float>& v)
{
    Tensor t(shape, DType::F32);
    EXPECT_EQ(static_cast<size_t>(t.numel()), v.size());
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
}

Tensor run_one(const Net& net, const std::string& input, const Tensor& x, const std::string& output, int threads = 1)
{
    Options o;
    o.threads = threads;
    Session s(net, o);
    s.set_input(input, x);
    return s.get(output);
}

std::vector<std::string> names_of(const Graph& g, const std::vector<int>& blobs)
{
    std::vector<std::string> v;
    for (int b : blobs) v.push_back(g.blobs[b].name);
    return v;
}

// Everything a .param file says about a graph, in a comparable form.
std::string describe_graph(const Graph& g)
{
    std::string s;
    for (const Layer& l : g.layers) {
        s += l.type + "|" + l.name + "|";
        for (const auto& n : names_of(g, l.bottoms)) s += n + ",";
        s += "|";
        for (const auto& n : names_of(g, l.tops)) s += n + ",";
        s += "|" + l.params.to_text() + "\n";
    }
    return s;
}

// ===========================================================================
// .param text
// ===========================================================================

const char* const kParamZoo = R"PARAM(7767517
2 2
Input  in 0 1 in
Noop   params 1 1 in out 0=1 1=-7 2=2147483647 3=-2147483648 4=1.5 5=-2.5e-3 6=1e5 7=3E2 8=.5 9=-0.0 10=abc 11="quoted with spaces, and commas" 12=inf 13="-1,*(0h,2)" 14=1,2,3 15=0.5,1,2 16=1,2.5 17=-1,-2 -23318=3,1,2,3 -23319=2,0.25,4.5 -23320=0 21=2.0 22=-3.25e+2 23=+5 -23330=4,3,37,37,256 31=1
)PARAM";

void check_param_zoo(const ParamDict& p)
{
    using K = ParamDict::Kind;
    // int scalars
    for (int id : {0, 1, 2, 3, 23, 31}) EXPECT_EQ(p.kind(id), K::Int) << "id " << id;
    EXPECT_EQ(p.get_int(0, 99), 1);
    EXPECT_EQ(p.get_int(1, 99), -7);
    EXPECT_EQ(p.get_int(2, 99), 2147483647);
    EXPECT_EQ(p.get_int(3, 99), -2147483647 - 1);
    EXPECT_EQ(p.get_int(23, 99), 5);
    EXPECT_EQ(p.get_int(31, 99), 1);
    // float scalars: any token with '.', 'e' or 'E'
    for (int id : {4, 5, 6, 7, 8, 9, 21, 22}) EXPECT_EQ(p.kind(id), K::Float) << "id " << id;
    EXPECT_EQ(p.get_float(4, 0), 1.5f);
    EXPECT_EQ(p.get_float(5, 0), -2.5e-3f);
    EXPECT_EQ(p.get_float(6, 0), 1e5f);
    EXPECT_EQ(p.get_float(7, 0), 300.f);
    EXPECT_EQ(p.get_float(8, 0), 0.5f);
    EXPECT_EQ(p.get_float(9, 1), 0.f);
    EXPECT_TRUE(std::signbit(p.get_float(9, 1))) << "-0.0 keeps its sign";
    EXPECT_EQ(p.get_float(21, 0), 2.f);
    EXPECT_EQ(p.get_int(21, 0), 2) << "an integral float is accepted where an int is read (param_dict.h)";
    EXPECT_EQ(p.get_float(22, 0), -325.f);
    // strings: first character a letter or '"'; quotes removed; "inf" is a string
    for (int id : {10, 11, 12, 13}) EXPECT_EQ(p.kind(id), K::String) << "id " << id;
    EXPECT_EQ(p.get_string(10), "abc");
    EXPECT_EQ(p.get_string(11), "quoted with spaces, and commas");
    EXPECT_EQ(p.get_string(12), "inf");
    EXPECT_EQ(p.get_string(13), "-1,*(0h,2)");
    // new-style arrays: the first element decides int vs float
    EXPECT_EQ(p.kind(14), K::IntArray);
    EXPECT_EQ(p.get_ints(14), (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(p.kind(15), K::FloatArray);
    EXPECT_EQ(p.get_floats(15), (std::vector<float>{0.5f, 1.f, 2.f}));
    EXPECT_EQ(p.kind(16), K::IntArray) << "3=1,2.5 is an int array in ncnn";
    EXPECT_EQ(p.get_ints(16), (std::vector<int>{1, 2})) << "2.5 read with %d gives 2";
    EXPECT_EQ(p.get_ints(17), (std::vector<int>{-1, -2}));
    // old-style arrays: -23300-id=len,...
    EXPECT_EQ(p.kind(18), K::IntArray);
    EXPECT_EQ(p.get_ints(18), (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(p.kind(19), K::FloatArray);
    EXPECT_EQ(p.get_floats(19), (std::vector<float>{0.25f, 4.5f}));
    EXPECT_TRUE(p.has(20));
    EXPECT_TRUE(p.get_ints(20).empty());
    // id 30: output shape hints, accepted and kept
    EXPECT_EQ(p.get_ints(30), (std::vector<int>{3, 37, 37, 256}));
    // ids never written
    for (int id : {24, 25, 26, 27, 28, 29}) EXPECT_FALSE(p.has(id)) << "id " << id;
    EXPECT_EQ(p.get_int(24, 77), 77);
    // typed getters refuse the wrong kind instead of reinterpreting bits
    EXPECT_THROW(p.get_int(10, 0), Error);
    EXPECT_THROW(p.get_int(14, 0), Error);
    EXPECT_THROW(p.get_string(0), Error);
    EXPECT_THROW(p.get_int(4, 0), Error) << "1.5 is not an integer";
}

TEST(NcnnFormatParamText, ScalarsStringsAndArrays)
{
    Net net;
    net.load_param_mem(kParamZoo, "zoo.param");
    const Graph& g = net.graph();
    ASSERT_EQ(g.layers.size(), 2u);
    ASSERT_EQ(g.blobs.size(), 2u);
    EXPECT_EQ(g.layers[1].type, "Noop");
    EXPECT_EQ(g.layers[1].name, "params");
    EXPECT_EQ(g.layers[1].line, 4);
    check_param_zoo(g.layers[1].params);
}

TEST(NcnnFormatParamText, WrittenParamsParseBackToTheSameValues)
{
    Net net;
    net.load_param_mem(kParamZoo, "zoo.param");
    const std::string text = net.param_text();
    Net again;
    again.load_param_mem(text, "rewritten.param");
    SCOPED_TRACE(text);
    check_param_zoo(again.graph().layers[1].params);
    EXPECT_EQ(describe_graph(again.graph()), describe_graph(net.graph()));
}

// The same graph written three ways: tokens are whitespace-separated, newlines included.
const char* const kSplitModelLines = "7767517\n"
                                     "4 5\n"
                                     "Input    in  0 1 data 0=4 1=3 2=2\n"
                                     "Split    sp  1 2 data a b\n"
                                     "ReLU     r   1 1 a ra 0=0.5\n"
                                     "BinaryOp add 2 1 ra b out 0=0\n";
const char* const kSplitModelOneLine =
    "7767517 4 5 Input in 0 1 data 0=4 1=3 2=2 Split sp 1 2 data a b ReLU r 1 1 a ra 0=0.5 BinaryOp add 2 1 ra b out 0=0";
const char* const kSplitModelScattered = "\r\n\n7767517\r\n4\t5\r\n"
                                         "Input\r\nin\n0\n1\ndata\t\t0=4\n1=3\n\n2=2\n"
                                         "  Split sp\t1 2\ndata\na b\r\n"
                                         "ReLU r 1\n1 a\n ra\n0=0.5 BinaryOp\nadd 2\n1 ra\nb\nout\r\n0=0\r\n\r\n   ";

TEST(NcnnFormatParamText, WhitespaceAndNewlinesAreOnlySeparators)
{
    Net a, b, c;
    a.load_param_mem(kSplitModelLines, "lines.param");
    b.load_param_mem(kSplitModelOneLine, "oneline.param");
    c.load_param_mem(kSplitModelScattered, "scattered.param");
    const std::string expected = "Input|in||data,|0=4 1=3 2=2\n"
                                 "Split|sp|data,|a,b,|\n"
                                 "ReLU|r|a,|ra,|0=5.000000000e-01\n"
                                 "BinaryOp|add|ra,b,|out,|0=0\n";
    EXPECT_EQ(describe_graph(a.graph()), expected);
    EXPECT_EQ(describe_graph(b.graph()), expected);
    EXPECT_EQ(describe_graph(c.graph()), expected);
    // Line numbers (used in messages) follow the text.
    EXPECT_EQ(a.graph().layers[0].line, 3);
    EXPECT_EQ(a.graph().layers[3].line, 6);
    EXPECT_EQ(b.graph().layers[3].line, 1);
    EXPECT_EQ(c.graph().layers[0].line, 5);
    EXPECT_EQ(c.graph().layers[3].line, 19);
}

TEST(NcnnFormatParamText, LayersBlobsInputsOutputsAndCompute)
{
    Net net;
    net.load_param_mem(kSplitModelLines, "split.param");
    const Graph& g = net.graph();
    ASSERT_EQ(g.layers.size(), 4u);
    ASSERT_EQ(g.blobs.size(), 5u);
    EXPECT_EQ(net.input_names(), (std::vector<std::string>{"data"}));
    EXPECT_EQ(net.output_names(), (std::vector<std::string>{"out"}));
    EXPECT_EQ(net.input_shape("data"), (Shape{2, 3, 4})) << "0=w 1=h 2=c -> (c,h,w)";
    const std::map<std::string, std::pair<int, std::vector<int>>> expected = {
        {"data", {0, {1}}}, {"a", {1, {2}}}, {"b", {1, {3}}}, {"ra", {2, {3}}}, {"out", {3, {}}}};
    for (const auto& kv : expected) {
        const int b = g.find_blob(kv.first);
        ASSERT_GE(b, 0) << kv.first;
        EXPECT_EQ(g.blobs[b].producer, kv.second.first) << kv.first;
        EXPECT_EQ(g.blobs[b].consumers, kv.second.second) << kv.first;
    }
    EXPECT_FALSE(net.needs_weights());
    // out = leaky_relu(x, 0.5) + x
    std::vector<float> x(24);
    for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i) * 0.25f - 3.f;
    const Tensor y = run_one(net, "data", make_f32({2, 3, 4}, x), "out");
    ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
    for (int i = 0; i < 24; ++i) EXPECT_EQ(y.data<float>()[i], (x[i] < 0 ? x[i] * 0.5f : x[i]) + x[i]) << i;
}

// Outputs that a layer also reads, or listed in another order (ONNX graphs
// name theirs), survive writing and reading through a trailing `Output`
// record, which ncnn skips like any record after the declared layers.
TEST(NcnnFormatParamText, DeclaredOutputsRoundTripThroughAnOutputRecord)
{
    Net built;
    built.add_layer("Input", "in", {}, {"x"});
    built.add_layer("ReLU", "relu", {"x"}, {"y1"});
    built.add_layer("Sigmoid", "sig", {"y1"}, {"y2"});
    built.set_output_names({"y2", "y1"});
    const std::string text = built.param_text();
    EXPECT_NE(text.find("\nOutput outputs 2 0 y2 y1\n"), std::string::npos) << text;
    Net loaded;
    loaded.load_param_mem(text, "outputs.param");
    EXPECT_EQ(loaded.graph().layers.size(), 3u);
    ASSERT_EQ(loaded.output_names(), (std::vector<std::string>{"y2", "y1"}));
    Session s(loaded);
    s.set_input("x", make_f32({3}, {-1.f, 0.5f, 2.f}));
    const std::vector<Tensor> out = s.run(loaded.output_names());
    for (int i = 0; i < 3; ++i) {
        const float relu = std::max(0.f, std::vector<float>{-1.f, 0.5f, 2.f}[i]);
        EXPECT_EQ(out[1].data<float>()[i], relu);
        EXPECT_FLOAT_EQ(out[0].data<float>()[i], 1.f / (1.f + std::exp(-relu)));
    }
    // Outputs that are just the unread blobs need no record: ncnn files are written back as they were.
    Net plain;
    plain.load_param_mem(kSplitModelLines, "split.param");
    EXPECT_EQ(plain.param_text().find("Output"), std::string::npos);
    // A record naming a blob nobody produces, or a second record, is an error naming the file.
    const std::string base = text.substr(0, text.find("Output"));
    for (const std::string& bad : {base + "Output outputs 1 0 nowhere\n",
                                   base + "Output outputs 1 0 y1\nOutput outputs 1 0 y2\n"}) {
        Net n;
        try {
            n.load_param_mem(bad, "bad_outputs.param");
            ADD_FAILURE() << "expected an error for:\n" << bad;
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("bad_outputs.param"), std::string::npos) << e.what();
        }
    }
}

// Our Input params: 21=dtype alone (what an ONNX If branch declares for a
// value whose rank is unknown) checks the dtype and takes any rank; 20=dims
// checks the shape too.
TEST(NcnnFormatParamText, InputDtypeWithoutDimsTakesAnyRank)
{
    Net net;
    net.load_param_mem("7767517\n3 3\nInput x 0 1 x 21=0\nInput v 0 1 v -23320=2,2,-1 21=0\nReLU r 1 1 x y\n",
                       "inputs.param");
    for (const Shape& shape : {Shape{}, Shape{4}, Shape{2, 3, 1}}) {
        Session s(net);
        Tensor x(shape, DType::F32);
        for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(i) - 1.5f;
        s.set_input("x", x);
        const Tensor y = s.get("y");
        ASSERT_EQ(y.shape(), shape);
        for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y.data<float>()[i], std::max(0.f, static_cast<float>(i) - 1.5f));
    }
    Session s(net);
    const auto error_of = [](const std::function<void()>& fn) -> std::string {
        try {
            fn();
        } catch (const Error& e) {
            return e.what();
        }
        return "no error";
    };
    EXPECT_NE(error_of([&] { s.set_input("x", Tensor({2}, DType::I32)); }).find("must be float32"), std::string::npos);
    EXPECT_NE(error_of([&] { s.set_input("v", Tensor({3, 1}, DType::F32)); }).find("must have shape"), std::string::npos);
    EXPECT_EQ(error_of([&] { s.set_input("v", Tensor({2, 7}, DType::F32)); }), "no error");
}

TEST(NcnnFormatParamText, BlobCountMayExceedTheBlobsUsed)
{
    // ncnn sizes its blob table from the header; more room than needed is fine.
    std::string text = kSplitModelLines;
    text.replace(text.find("4 5"), 3, "4 40");
    Net net;
    ASSERT_NO_THROW(net.load_param_mem(text, "roomy.param"));
    EXPECT_EQ(net.graph().blobs.size(), 5u);
}

TEST(NcnnFormatParamText, ShapeHintsAreAcceptedOnRealLayers)
{
    // -23330 (id 30) on a Convolution and a ReLU, as ncnn's benchmark models have them.
    const std::string text = "7767517\n3 3\n"
                             "Input in 0 1 in 0=2 1=2 2=1 -23330=4,3,2,2,1\n"
                             "Convolution conv 1 1 in c 0=1 1=1 6=1 -23330=4,3,2,2,1\n"
                             "ReLU relu 1 1 c out -23330=4,3,2,2,1\n";
    Net net;
    net.load_param_mem(text, "hints.param");
    EXPECT_EQ(net.graph().layers[1].params.get_ints(30), (std::vector<int>{3, 2, 2, 1}));
    const Bytes bin = Bytes().u32(0).f32(-2.f); // tagged fp32 weight, no bias
    net.load_model_mem(bin.b.data(), bin.size());
    const Tensor y = run_one(net, "in", make_f32({1, 2, 2}, {1.f, -1.f, 0.5f, -3.f}), "out");
    EXPECT_EQ(values_of(y), (std::vector<float>{0.f, 2.f, 0.f, 6.f}));
}

// ===========================================================================
// .param.bin
// ===========================================================================

// Input -> Convolution(1x1, bias, fused leaky 0.1) -> ReLU(slope 0.25) -> Reshape(expression) -> InnerProduct.
const char* const kBinTwinText = "7767517\n5 5\n"
                                 "Input in 0 1 in 0=3 1=2 2=2\n"
                                 "Convolution conv 1 1 in c 0=3 1=1 5=1 6=6 9=2 -23310=1,0.1\n"
                                 "ReLU relu 1 1 c r 0=0.25\n"
                                 "Reshape rs 1 1 r rs 6=\"*(0w,0h),0c\"\n"
                                 "InnerProduct fc 1 1 rs out 0=4 1=1 2=72\n";

Bytes bin_twin_param_bin()
{
    const int kInput = 16, kConvolution = 6, kReLU = 26, kReshape = 27, kInnerProduct = 15;
    Bytes p;
    p.i32(7767517).i32(5).i32(5);
    p.i32(kInput).i32(0).i32(1).i32(0);
    p.i32(0).i32(3).i32(1).i32(2).i32(2).i32(2).i32(-233);
    p.i32(kConvolution).i32(1).i32(1).i32(0).i32(1);
    p.i32(0).i32(3).i32(1).i32(1).i32(5).i32(1).i32(6).i32(6).i32(9).i32(2);
    p.i32(-23300 - 10).i32(1).f32(0.1f).i32(-233);
    p.i32(kReLU).i32(1).i32(1).i32(1).i32(2);
    p.i32(0).f32(0.25f).i32(-233);
    p.i32(kReshape).i32(1).i32(1).i32(2).i32(3);
    p.i32(-23400 - 6).i32(11).str("*(0w,0h),0c").pad4().i32(-233);
    p.i32(kInnerProduct).i32(1).i32(1).i32(3).i32(4);
    p.i32(0).i32(4).i32(1).i32(1).i32(2).i32(72).i32(-233);
    return p;
}

struct BinTwinWeights {
    std::vector<float> conv_w, conv_b, fc_w, fc_b;
};

BinTwinWeights bin_twin_weights()
{
    BinTwinWeights w;
    for (int i = 0; i < 6; ++i) w.conv_w.push_back(static_cast<float>((i * 5) % 7 - 3) * 0.5f);
    w.conv_b = {0.25f, -1.f, 0.5f};
    for (int i = 0; i < 72; ++i) w.fc_w.push_back(static_cast<float>((i * 11) % 13 - 6) * 0.125f);
    w.fc_b = {1.f, -2.f, 0.f, 0.5f};
    return w;
}

Bytes bin_twin_bin(const BinTwinWeights& w)
{
    Bytes b;
    b.u32(0);
    for (float v : w.conv_w) b.f32(v);
    for (float v : w.conv_b) b.f32(v);
    b.u32(0);
    for (float v : w.fc_w) b.f32(v);
    for (float v : w.fc_b) b.f32(v);
    return b;
}

// The same computation written out: x is (c=2,h=2,w=3).
std::vector<double> bin_twin_reference(const BinTwinWeights& w, const std::vector<float>& x)
{
    std::vector<double> r(18); // (3 channels, 6 positions)
    for (int oc = 0; oc < 3; ++oc)
        for (int p = 0; p < 6; ++p) {
            double s = w.conv_b[oc];
            for (int ic = 0; ic < 2; ++ic) s += double(w.conv_w[oc * 2 + ic]) * x[ic * 6 + p];
            if (s < 0) s *= 0.1;  // fused LeakyReLU
            if (s < 0) s *= 0.25; // ReLU layer with slope
            r[oc * 6 + p] = s;
        }
    // Reshape to (3,6) keeps the order; InnerProduct flattens 18 values.
    std::vector<double> out(4);
    for (int o = 0; o < 4; ++o) {
        double s = w.fc_b[o];
        for (int k = 0; k < 18; ++k) s += double(w.fc_w[o * 18 + k]) * r[k];
        out[o] = s;
    }
    return out;
}

std::vector<float> bin_twin_input()
{
    std::vector<float> x(12);
    for (int i = 0; i < 12; ++i) x[i] = static_cast<float>((i * 7) % 12) * 0.3f - 1.7f;
    return x;
}

TEST(NcnnFormatParamBin, HandBuiltBinaryMatchesTextFormAndHandComputation)
{
    const BinTwinWeights w = bin_twin_weights();
    const Bytes weights = bin_twin_bin(w);
    const Bytes pbin = bin_twin_param_bin();

    Net text_net, bin_net;
    text_net.load_param_mem(kBinTwinText, "twin.param");
    text_net.load_model_mem(weights.b.data(), weights.size());
    bin_net.load_param_bin_mem(pbin.b.data(), pbin.size(), "twin.param.bin");
    bin_net.load_model_mem(weights.b.data(), weights.size());

    // Graph of the binary form: ncnn type names, index names for layers and blobs.
    const Graph& g = bin_net.graph();
    ASSERT_EQ(g.layers.size(), 5u);
    const char* types[] = {"Input", "Convolution", "ReLU", "Reshape", "InnerProduct"};
    for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(g.layers[i].type, types[i]);
        EXPECT_EQ(g.layers[i].name, "layer" + std::to_string(i));
    }
    EXPECT_EQ(bin_net.input_names(), (std::vector<std::string>{"0"}));
    EXPECT_EQ(bin_net.output_names(), (std::vector<std::string>{"4"}));
    EXPECT_EQ(bin_net.input_shape("0"), (Shape{2, 2, 3}));
    EXPECT_EQ(g.layers[1].params.kind(10), ParamDict::Kind::RawArray);
    EXPECT_EQ(g.layers[1].params.get_floats(10), (std::vector<float>{0.1f}));
    EXPECT_EQ(g.layers[1].params.kind(6), ParamDict::Kind::RawScalar);
    EXPECT_EQ(g.layers[1].params.get_int(6, 0), 6);
    EXPECT_EQ(g.layers[2].params.get_float(0, 0), 0.25f);
    EXPECT_EQ(g.layers[3].params.kind(6), ParamDict::Kind::String);
    EXPECT_EQ(g.layers[3].params.get_string(6), "*(0w,0h),0c");

    const std::vector<float> x = bin_twin_input();
    const Tensor yt = run_one(text_net, "in", make_f32({2, 2, 3}, x), "out");
    const Tensor yb = run_one(bin_net, "0", make_f32({2, 2, 3}, x), "4");
    EXPECT_TRUE(same_bits(yt, yb)) << "text and binary forms of one model must compute the same bits";
    const Tensor rs = run_one(bin_net, "0", make_f32({2, 2, 3}, x), "3");
    EXPECT_EQ(rs.shape(), (Shape{3, 6})) << "Reshape 6=\"*(0w,0h),0c\" gives w=6, c... as (h=3, w=6)";

    const std::vector<double> ref = bin_twin_reference(w, x);
    ASSERT_EQ(yb.shape(), (Shape{4}));
    for (int o = 0; o < 4; ++o) EXPECT_NEAR(yb.data<float>()[o], ref[o], 1e-4 * (1 + std::fabs(ref[o]))) << o;
}

TEST(NcnnFormatParamBin, CliRunsParamBinWithDefaultWeightsPath)
{
    ktest::TempDir dir;
    const BinTwinWeights w = bin_twin_weights();
    ktest::write_file(dir.file("twin.param.bin"), bin_twin_param_bin().b);
    ktest::write_file(dir.file("twin.bin"), bin_twin_bin(w).b);
    const std::vector<float> x = bin_twin_input();
    write_npy(dir.file("x.npy"), make_f32({2, 2, 3}, x));
    const ktest::CliResult r =
        ktest::run_cli({"run", dir.file("twin.param.bin"), "--input", "0=" + dir.file("x.npy"), "--output",
                        "4=" + dir.file("y.npy")});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const Tensor y = read_npy(dir.file("y.npy"));
    const std::vector<double> ref = bin_twin_reference(w, x);
    ASSERT_EQ(y.shape(), (Shape{4}));
    for (int o = 0; o < 4; ++o) EXPECT_NEAR(y.data<float>()[o], ref[o], 1e-4 * (1 + std::fabs(ref[o]))) << o;
}

// ===========================================================================
// .bin weights: every ModelBin encoding
// ===========================================================================

// Input (c=3,h=1,w=3) -> Convolution 1x1, 3->5, bias -> InnerProduct 15->3, bias.
// Odd weight counts (15 and 45) exercise the fp16 / int8 / codebook padding.
const char* const kTinyText = "7767517\n3 3\n"
                              "Input in 0 1 in 0=3 1=1 2=3\n"
                              "Convolution conv 1 1 in c 0=5 1=1 5=1 6=15\n"
                              "InnerProduct fc 1 1 c out 0=3 1=1 2=45\n";

constexpr uint32_t kTagFp32 = 0, kTagFp16 = 0x01306B47, kTagInt8 = 0x000D4B38, kTagFp32Scaled = 0x0002C056;
constexpr uint32_t kTagCodebook = 0x01020304; // any other non-zero tag

// Weights are k/64 for k in [-128,127]: exact in fp32, fp16 and the codebook below.
struct TinyWeights {
    std::vector<int> conv_k, fc_k; // the k of each tagged weight
    std::vector<float> conv_b, fc_b;
    static float value(int k) { return static_cast<float>(k) / 64.f; }
    std::vector<float> conv_w() const { return values(conv_k); }
    std::vector<float> fc_w() const { return values(fc_k); }
    static std::vector<float> values(const std::vector<int>& ks)
    {
        std::vector<float> v;
        for (int k : ks) v.push_back(value(k));
        return v;
    }
};

TinyWeights tiny_weights()
{
    TinyWeights w;
    uint32_t s = 12345;
    auto next_k = [&] {
        s = s * 1103515245u + 12345u;
        return static_cast<int>((s >> 16) % 256) - 128;
    };
    for (int i = 0; i < 15; ++i) w.conv_k.push_back(next_k());
    for (int i = 0; i < 45; ++i) w.fc_k.push_back(next_k());
    w.conv_b = {0.5f, -0.25f, 1.f, 0.f, -2.f};
    w.fc_b = {0.125f, -1.5f, 3.f};
    return w;
}

// Codebook: table[j] = value((j*73+5) % 256 - 128), a permutation of all k/64.
float codebook_entry(int j) { return TinyWeights::value((j * 73 + 5) % 256 - 128); }
int codebook_index(int k)
{
    for (int j = 0; j < 256; ++j)
        if ((j * 73 + 5) % 256 - 128 == k) return j;
    return -1;
}

enum class Enc { Fp32, Fp16, Fp32Scaled, Codebook };
const char* enc_name(Enc e)
{
    switch (e) {
    case Enc::Fp32: return "fp32";
    case Enc::Fp16: return "fp16";
    case Enc::Fp32Scaled: return "fp32-0x0002C056";
    case Enc::Codebook: return "codebook";
    }
    return "?";
}

void append_tagged(Bytes& b, Enc e, const std::vector<int>& ks)
{
    switch (e) {
    case Enc::Fp32:
    case Enc::Fp32Scaled:
        b.u32(e == Enc::Fp32 ? kTagFp32 : kTagFp32Scaled);
        for (int k : ks) b.f32(TinyWeights::value(k));
        break;
    case Enc::Fp16:
        b.u32(kTagFp16);
        for (int k : ks) b.u16(ktest::float_to_half_ref(TinyWeights::value(k)));
        b.pad4();
        break;
    case Enc::Codebook:
        b.u32(kTagCodebook);
        for (int j = 0; j < 256; ++j) b.f32(codebook_entry(j));
        for (int k : ks) b.u8(static_cast<uint8_t>(codebook_index(k)));
        b.pad4();
        break;
    }
}

Bytes tiny_bin(const TinyWeights& w, Enc conv_enc, Enc fc_enc)
{
    Bytes b;
    append_tagged(b, conv_enc, w.conv_k);
    for (float v : w.conv_b) b.f32(v); // raw (type 1)
    append_tagged(b, fc_enc, w.fc_k);
    for (float v : w.fc_b) b.f32(v);
    return b;
}

std::vector<float> tiny_input()
{
    std::vector<float> x(9);
    for (int i = 0; i < 9; ++i) x[i] = static_cast<float>(i) * 0.37f - 1.3f;
    return x;
}

std::vector<double> tiny_reference(const TinyWeights& w, const std::vector<float>& x)
{
    const std::vector<float> cw = w.conv_w(), fw = w.fc_w();
    std::vector<double> c(15); // (5 channels, 3 positions)
    for (int oc = 0; oc < 5; ++oc)
        for (int p = 0; p < 3; ++p) {
            double s = w.conv_b[oc];
            for (int ic = 0; ic < 3; ++ic) s += double(cw[oc * 3 + ic]) * x[ic * 3 + p];
            c[oc * 3 + p] = s;
        }
    std::vector<double> out(3);
    for (int o = 0; o < 3; ++o) {
        double s = w.fc_b[o];
        for (int k = 0; k < 15; ++k) s += double(fw[o * 15 + k]) * c[k];
        out[o] = s;
    }
    return out;
}

void expect_matches_reference(const Tensor& y, const std::vector<double>& ref)
{
    ASSERT_EQ(y.shape(), (Shape{static_cast<int64_t>(ref.size())}));
    for (size_t i = 0; i < ref.size(); ++i)
        EXPECT_NEAR(y.data<float>()[i], ref[i], 1e-5 * (1 + std::fabs(ref[i]))) << "output " << i;
}

void expect_tiny_weights_decoded(const Net& net, const TinyWeights& w)
{
    const Graph& g = net.graph();
    ASSERT_EQ(g.layers[1].weights.size(), 2u);
    ASSERT_EQ(g.layers[2].weights.size(), 2u);
    EXPECT_EQ(values_of(g.layers[1].weights[0].value), w.conv_w());
    EXPECT_EQ(values_of(g.layers[1].weights[1].value), w.conv_b);
    EXPECT_EQ(values_of(g.layers[2].weights[0].value), w.fc_w());
    EXPECT_EQ(values_of(g.layers[2].weights[1].value), w.fc_b);
}

TEST(NcnnFormatBin, EveryTagDecodesToTheSameWeightsAndHandComputedOutput)
{
    const TinyWeights w = tiny_weights();
    const std::vector<float> x = tiny_input();
    const std::vector<double> ref = tiny_reference(w, x);
    const Tensor xt = make_f32({3, 1, 3}, x);

    Net fp32_net;
    fp32_net.load_param_mem(kTinyText, "tiny.param");
    const Bytes fp32_bin = tiny_bin(w, Enc::Fp32, Enc::Fp32);
    ASSERT_EQ(fp32_bin.size(), 4u + 15 * 4 + 5 * 4 + 4 + 45 * 4 + 3 * 4);
    fp32_net.load_model_mem(fp32_bin.b.data(), fp32_bin.size());
    const Tensor y32 = run_one(fp32_net, "in", xt, "out");
    expect_matches_reference(y32, ref);

    const Enc all[] = {Enc::Fp32, Enc::Fp16, Enc::Fp32Scaled, Enc::Codebook};
    for (Enc ce : all)
        for (Enc fe : all) {
            SCOPED_TRACE(std::string("conv ") + enc_name(ce) + ", fc " + enc_name(fe));
            const Bytes bin = tiny_bin(w, ce, fe);
            Net net;
            net.load_param_mem(kTinyText, "tiny.param");
            ASSERT_NO_THROW(net.load_model_mem(bin.b.data(), bin.size(), "tiny.bin"));
            expect_tiny_weights_decoded(net, w);
            const Tensor y = run_one(net, "in", xt, "out");
            expect_matches_reference(y, ref);
            EXPECT_TRUE(same_bits(y, y32)) << "same decoded weights must give the same bits as fp32";
        }
}

TEST(NcnnFormatBin, EncodedSizesFollowThePaddingRules)
{
    // Independent of the engine: a check that the test's own writer pads as the spec says,
    // so the loader's consuming the whole file proves it skipped the same padding.
    const TinyWeights w = tiny_weights();
    const size_t raw = 5 * 4 + 3 * 4;
    EXPECT_EQ(tiny_bin(w, Enc::Fp16, Enc::Fp16).size(), raw + (4 + 32) + (4 + 92)); // 30->32, 90->92
    EXPECT_EQ(tiny_bin(w, Enc::Codebook, Enc::Codebook).size(), raw + (4 + 1024 + 16) + (4 + 1024 + 48));
    EXPECT_EQ(tiny_bin(w, Enc::Fp32Scaled, Enc::Fp32Scaled).size(), raw + (4 + 60) + (4 + 180));
}

TEST(NcnnFormatBin, FileMemoryAndReaderCallbackLoadTheSame)
{
    const TinyWeights w = tiny_weights();
    const std::vector<double> ref = tiny_reference(w, tiny_input());
    const Tensor xt = make_f32({3, 1, 3}, tiny_input());
    ktest::TempDir dir;
    for (Enc ce : {Enc::Fp16, Enc::Codebook, Enc::Fp32Scaled}) {
        SCOPED_TRACE(enc_name(ce));
        const Bytes bin = tiny_bin(w, ce, Enc::Fp16);
        ktest::write_file(dir.file("tiny.bin"), bin.b);

        Net from_file, from_mem, from_reader;
        for (Net* n : {&from_file, &from_mem, &from_reader}) n->load_param_mem(kTinyText, "tiny.param");
        from_file.load_model(dir.file("tiny.bin"));
        from_mem.load_model_mem(bin.b.data(), bin.size());
        // A reader that hands out at most 7 bytes per call.
        size_t pos = 0, calls = 0;
        from_reader.load_model(
            [&](void* dst, size_t n) {
                ++calls;
                const size_t k = std::min({n, size_t(7), bin.size() - pos});
                std::memcpy(dst, bin.b.data() + pos, k);
                pos += k;
                return k;
            },
            "tiny-reader");
        EXPECT_EQ(pos, bin.size()) << "the reader was read to the end";
        EXPECT_GT(calls, bin.size() / 7);
        const Tensor a = run_one(from_file, "in", xt, "out");
        const Tensor b = run_one(from_mem, "in", xt, "out");
        const Tensor c = run_one(from_reader, "in", xt, "out");
        expect_matches_reference(a, ref);
        EXPECT_TRUE(same_bits(a, b));
        EXPECT_TRUE(same_bits(a, c));
    }
}

TEST(NcnnFormatBin, Fp16DecodingOfEdgeValues)
{
    // Raw half bit patterns: normals, subnormals, max, signed zero, one-ulp values.
    const std::vector<uint16_t> halves = {0x3C00, 0xC000, 0x0001, 0x03FF, 0x7BFF, 0x8000, 0x3555, 0x0400,
                                          0xFBFF, 0x2E66, 0x5640, 0x1234, 0x8001, 0x4248, 0xB800};
    Bytes bin;
    bin.u32(kTagFp16);
    for (uint16_t h : halves) bin.u16(h);
    bin.pad4();
    for (int i = 0; i < 5; ++i) bin.f32(0.f);
    bin.u32(0);
    for (int i = 0; i < 45; ++i) bin.f32(0.f);
    for (int i = 0; i < 3; ++i) bin.f32(0.f);
    Net net;
    net.load_param_mem(kTinyText, "tiny.param");
    ASSERT_NO_THROW(net.load_model_mem(bin.b.data(), bin.size()));
    const Tensor& wt = net.graph().layers[1].weights[0].value;
    ASSERT_EQ(wt.dtype(), DType::F32);
    ASSERT_EQ(wt.numel(), 15);
    for (size_t i = 0; i < halves.size(); ++i) {
        const float expected = ktest::half_to_float_ref(halves[i]);
        EXPECT_EQ(ktest::float_bits(wt.data<float>()[i]), ktest::float_bits(expected))
            << "half 0x" << std::hex << halves[i] << " -> " << wt.data<float>()[i] << ", expected " << expected;
    }
    // Spot values written out by hand.
    EXPECT_EQ(wt.data<float>()[0], 1.f);
    EXPECT_EQ(wt.data<float>()[1], -2.f);
    EXPECT_EQ(wt.data<float>()[2], 5.9604644775390625e-8f);
    EXPECT_EQ(wt.data<float>()[4], 65504.f);
    EXPECT_EQ(wt.data<float>()[8], -65504.f);
}

TEST(NcnnFormatBin, Int8TaggedWeightsWithoutScaleTermAreRejectedClearly)
{
    // int8 weights are only meaningful with int8_scale_term (param 8): the load must say so.
    Bytes bin;
    bin.u32(kTagInt8);
    for (int i = 0; i < 15; ++i) bin.u8(static_cast<uint8_t>(i * 9 - 60));
    bin.pad4();
    for (int i = 0; i < 5; ++i) bin.f32(0.f);
    bin.u32(0);
    for (int i = 0; i < 48; ++i) bin.f32(0.f);
    Net net;
    net.load_param_mem(kTinyText, "tiny.param");
    try {
        net.load_model_mem(bin.b.data(), bin.size(), "tiny-int8.bin");
        FAIL() << "int8-tagged weights without int8_scale_term were accepted";
    } catch (const Error& e) {
        EXPECT_TRUE(ktest::message_has(e.what(), {"int8", "conv", "tiny.param:4"}));
    }
}

TEST(NcnnFormatBin, Int8TaggedWeightsWithScaleTerm)
{
    // Spec 1.3 / 1.6: int8 tag, 15 int8 values padded to 16 bytes, then raw bias [5],
    // raw weight scales [5], raw bottom scale [1]. Result per spec 1.7:
    //   q(x) = clamp(round(x * bottom_scale), -127, 127)
    //   y[oc] = (sum_ic w[oc][ic] * q(x[ic])) / (bottom_scale * w_scale[oc]) + bias[oc]
    const char* text = "7767517\n2 2\nInput in 0 1 in 0=3 1=1 2=3\n"
                       "Convolution conv 1 1 in out 0=5 1=1 5=1 6=15 8=1\n";
    std::vector<int8_t> w(15);
    for (int i = 0; i < 15; ++i) w[i] = static_cast<int8_t>((i * 37) % 255 - 127);
    const std::vector<float> bias = {0.5f, -1.f, 0.f, 2.f, -0.25f};
    const std::vector<float> wscale = {2.f, 4.f, 8.f, 16.f, 32.f};
    const float bottom = 10.f;
    Bytes bin;
    bin.u32(kTagInt8);
    for (int8_t v : w) bin.u8(static_cast<uint8_t>(v));
    bin.pad4();
    ASSERT_EQ(bin.size(), 4u + 16u);
    for (float v : bias) bin.f32(v);
    for (float v : wscale) bin.f32(v);
    bin.f32(bottom);
    Net net;
    net.load_param_mem(text, "int8.param");
    ASSERT_NO_THROW(net.load_model_mem(bin.b.data(), bin.size(), "int8.bin"));
    const Tensor& stored = net.graph().layers[1].weights[0].value;
    ASSERT_EQ(stored.dtype(), DType::I8);
    EXPECT_EQ(std::vector<int8_t>(stored.data<int8_t>(), stored.data<int8_t>() + 15), w);

    // Inputs away from .5 rounding ties; 20 and -13 saturate to +-127.
    const std::vector<float> x = {0.12f, -0.31f, 1.04f, 20.f, -13.f, 0.66f, -2.23f, 5.01f, 0.f};
    std::vector<int> q;
    for (float v : x) q.push_back(std::max(-127, std::min(127, static_cast<int>(std::lround(v * 10.0)))));
    const Tensor y = run_one(net, "in", make_f32({3, 1, 3}, x), "out");
    ASSERT_EQ(y.shape(), (Shape{5, 1, 3}));
    ASSERT_EQ(y.dtype(), DType::F32);
    for (int oc = 0; oc < 5; ++oc)
        for (int p = 0; p < 3; ++p) {
            long acc = 0;
            for (int ic = 0; ic < 3; ++ic) acc += long(w[oc * 3 + ic]) * q[ic * 3 + p];
            const double expected = double(acc) / (10.0 * wscale[oc]) + bias[oc];
            EXPECT_NEAR(y.data<float>()[oc * 3 + p], expected, 1e-5 * (1 + std::fabs(expected))) << oc << "," << p;
        }
    // The .bin is written back as it was read.
    ktest::TempDir dir;
    net.save_model(dir.file("saved.bin"));
    EXPECT_TRUE(ktest::read_bytes(dir.file("saved.bin")) == bin.b);
}

TEST(NcnnFormatBin, SaveModelWritesBackTheBytesItRead)
{
    const TinyWeights w = tiny_weights();
    ktest::TempDir dir;
    for (Enc ce : {Enc::Fp32, Enc::Fp16, Enc::Fp32Scaled, Enc::Codebook})
        for (Enc fe : {Enc::Fp32, Enc::Fp16, Enc::Codebook}) {
            SCOPED_TRACE(std::string("conv ") + enc_name(ce) + ", fc " + enc_name(fe));
            const Bytes bin = tiny_bin(w, ce, fe);
            Net net;
            net.load_param_mem(kTinyText, "tiny.param");
            net.load_model_mem(bin.b.data(), bin.size());
            net.save_model(dir.file("saved.bin"));
            EXPECT_TRUE(ktest::read_bytes(dir.file("saved.bin")) == bin.b);
        }
}

// ===========================================================================
// Round trips of the shared models
// ===========================================================================

void expect_files_identical(const std::string& a, const std::string& b)
{
    const std::vector<uint8_t> x = ktest::read_bytes(a), y = ktest::read_bytes(b);
    ASSERT_EQ(x.size(), y.size()) << a << " vs " << b;
    const auto diff = std::mismatch(x.begin(), x.end(), y.begin());
    EXPECT_TRUE(diff.first == x.end()) << a << " and " << b << " differ first at byte " << (diff.first - x.begin());
}

TEST(NcnnFormatRoundTrip, Resnet18SavesIdenticalBinAndComputesIdenticalOutput)
{
    const std::string dir = ktest::shared_path("models/resnet18/");
    Net original;
    original.load_param(dir + "ncnn.param");
    original.load_model(dir + "ncnn.bin");
    ktest::TempDir tmp;
    original.save_param(tmp.file("saved.param"));
    original.save_model(tmp.file("saved.bin"));
    expect_files_identical(dir + "ncnn.bin", tmp.file("saved.bin"));

    Net reloaded;
    reloaded.load_param(tmp.file("saved.param"));
    reloaded.load_model(tmp.file("saved.bin"));
    EXPECT_EQ(describe_graph(reloaded.graph()), describe_graph(original.graph()));
    EXPECT_EQ(reloaded.input_names(), original.input_names());
    EXPECT_EQ(reloaded.output_names(), original.output_names());

    const Tensor x = read_npy(dir + "ncnn_input.npy");
    const Tensor a = run_one(original, "input", x, "output", 2);
    const Tensor b = run_one(reloaded, "input", x, "output", 2);
    EXPECT_TRUE(same_bits(a, b)) << "outputs of the original and the saved model differ";
    EXPECT_EQ(a.shape(), (Shape{1000}));
}

// Writes every weight of `net` in ncnn encoding: tagged slots as fp16 (or as fp32
// holding exactly the fp16-rounded values), raw slots as fp32.
Bytes reencode(const Net& net, bool fp16)
{
    Bytes b;
    for (const Layer& l : net.graph().layers)
        for (const StoredWeight& w : l.weights) {
            const std::vector<float> v = values_of(w.value);
            if (w.encoding == WeightEncoding::Raw) {
                for (float f : v) b.f32(f);
                continue;
            }
            b.u32(fp16 ? kTagFp16 : kTagFp32);
            for (float f : v) {
                const uint16_t h = ktest::float_to_half_ref(f);
                EXPECT_TRUE(std::isfinite(ktest::half_to_float_ref(h))) << l.name << ": weight " << f;
                if (fp16) b.u16(h);
                else b.f32(ktest::half_to_float_ref(h));
            }
            if (fp16) b.pad4();
        }
    return b;
}

TEST(NcnnFormatRoundTrip, Fp16TaggedModelSavesIdenticalBinAndMatchesFp32OfTheSameValues)
{
    const std::string dir = ktest::shared_path("models/mobilenet_v2/");
    Net original;
    original.load_param(dir + "ncnn.param");
    original.load_model(dir + "ncnn.bin");
    const Bytes fp16 = reencode(original, true);
    const Bytes rounded32 = reencode(original, false);
    ASSERT_LT(fp16.size(), rounded32.size());

    ktest::TempDir tmp;
    ktest::write_file(tmp.file("fp16.bin"), fp16.b);
    Net net16, net32;
    net16.load_param(dir + "ncnn.param");
    net16.load_model(tmp.file("fp16.bin"));
    net32.load_param(dir + "ncnn.param");
    net32.load_model_mem(rounded32.b.data(), rounded32.size());

    net16.save_param(tmp.file("saved.param"));
    net16.save_model(tmp.file("saved.bin"));
    expect_files_identical(tmp.file("fp16.bin"), tmp.file("saved.bin"));
    Net reloaded;
    reloaded.load_param(tmp.file("saved.param"));
    reloaded.load_model(tmp.file("saved.bin"));

    const Tensor x = read_npy(dir + "ncnn_input.npy");
    const Tensor y16 = run_one(net16, "input", x, "output", 2);
    const Tensor y32 = run_one(net32, "input", x, "output", 2);
    const Tensor yr = run_one(reloaded, "input", x, "output", 2);
    EXPECT_TRUE(same_bits(y16, y32)) << "fp16 weights must decode to exactly the fp16-rounded fp32 values";
    EXPECT_TRUE(same_bits(y16, yr)) << "the saved fp16 model computes something else";
}

// ===========================================================================
// .npy
// ===========================================================================

const DType kAllDtypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I8,  DType::U8,  DType::I16,
                            DType::U16, DType::I32, DType::U32,  DType::I64, DType::U64, DType::Bool};

// numpy's descr for each dtype (bf16 has none: only the round trip is checked).
const char* numpy_descr(DType t)
{
    switch (t) {
    case DType::F32: return "<f4";
    case DType::F16: return "<f2";
    case DType::F64: return "<f8";
    case DType::I8: return "|i1";
    case DType::U8: return "|u1";
    case DType::I16: return "<i2";
    case DType::U16: return "<u2";
    case DType::I32: return "<i4";
    case DType::U32: return "<u4";
    case DType::I64: return "<i8";
    case DType::U64: return "<u8";
    case DType::Bool: return "|b1";
    default: return nullptr;
    }
}

// Python's repr of a shape tuple, as numpy writes it.
std::string python_shape(const Shape& s)
{
    std::string r = "(";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + (s.size() == 1 ? ",)" : ")");
}

void check_npy_bytes(const std::vector<uint8_t>& f, const Tensor& t)
{
    ASSERT_GE(f.size(), 10u);
    EXPECT_EQ(std::string(f.begin(), f.begin() + 6), "\x93NUMPY");
    ASSERT_EQ(f[6], 1) << "format version 1.0";
    const size_t hlen = f[8] | (f[9] << 8);
    ASSERT_LE(10 + hlen, f.size());
    EXPECT_EQ((10 + hlen) % 64, 0u) << "data starts 64-byte aligned";
    const std::string header(f.begin() + 10, f.begin() + 10 + hlen);
    EXPECT_EQ(header.back(), '\n');
    if (const char* d = numpy_descr(t.dtype())) {
        EXPECT_NE(header.find(std::string("'descr': '") + d + "'"), std::string::npos) << header;
    }
    EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
    EXPECT_NE(header.find("'shape': " + python_shape(t.shape())), std::string::npos) << header;
    ASSERT_EQ(f.size(), 10 + hlen + t.nbytes());
    EXPECT_TRUE(t.nbytes() == 0 || std::memcmp(f.data() + 10 + hlen, t.raw(), t.nbytes()) == 0);
}

TEST(NcnnFormatNpy, WriteReadRoundTripForEveryDtypeAndRank0To8)
{
    ktest::TempDir dir;
    for (DType dt : kAllDtypes) {
        std::vector<Shape> shapes;
        for (int rank = 0; rank <= 8; ++rank) {
            Shape s;
            for (int i = 0; i < rank; ++i) s.push_back(i % 3 + 1 + (rank == 1 ? 4 : 0));
            shapes.push_back(s);
        }
        shapes.push_back({2, 0, 3}); // zero elements
        for (const Shape& s : shapes) {
            SCOPED_TRACE(std::string(dtype_name(dt)) + " " + shape_str(s));
            Tensor t(s, dt);
            uint8_t* p = static_cast<uint8_t*>(t.raw());
            for (size_t i = 0; i < t.nbytes(); ++i)
                p[i] = dt == DType::Bool ? static_cast<uint8_t>(i % 3 == 0) : static_cast<uint8_t>(i * 131 + 7);
            const std::string path = dir.file("t.npy");
            write_npy(path, t);
            check_npy_bytes(ktest::read_bytes(path), t);
            const Tensor back = read_npy(path);
            EXPECT_EQ(back.dtype(), dt);
            EXPECT_EQ(back.shape(), s);
            EXPECT_TRUE(same_bits(back, t));
        }
    }
}

// A version 1.0 (2-byte length) or 2.0 (4-byte length) file around `dict`.
Bytes npy_file(const std::string& dict, const Bytes& data, int version = 1)
{
    std::string header = dict;
    const size_t pre = version == 1 ? 10 : 12;
    while ((pre + header.size() + 1) % 16) header += ' ';
    header += '\n';
    Bytes b;
    b.u8(0x93).str("NUMPY").u8(static_cast<uint8_t>(version)).u8(0);
    if (version == 1) b.u16(static_cast<uint16_t>(header.size()));
    else b.u32(static_cast<uint32_t>(header.size()));
    b.str(header).append(data);
    return b;
}

TEST(NcnnFormatNpy, ReadsHandWrittenFiles)
{
    {
        Bytes d;
        for (int v : {1, -2, 300, -32768, 32767, 0}) d.u16(static_cast<uint16_t>(v));
        const Bytes f = npy_file("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }", d);
        const Tensor t = parse_npy(f.b.data(), f.size(), "i2.npy");
        EXPECT_EQ(t.dtype(), DType::I16);
        EXPECT_EQ(t.shape(), (Shape{2, 3}));
        EXPECT_EQ(std::vector<int16_t>(t.data<int16_t>(), t.data<int16_t>() + 6),
                  (std::vector<int16_t>{1, -2, 300, -32768, 32767, 0}));
    }
    {
        Bytes d;
        for (double v : {0.5, -1e300, 3.25, 0.0}) {
            uint64_t u;
            std::memcpy(&u, &v, 8);
            d.u32(static_cast<uint32_t>(u)).u32(static_cast<uint32_t>(u >> 32));
        }
        const Bytes f = npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", d, 2);
        const Tensor t = parse_npy(f.b.data(), f.size(), "f8-v2.npy");
        EXPECT_EQ(t.dtype(), DType::F64);
        EXPECT_EQ(t.shape(), (Shape{4}));
        EXPECT_EQ(std::vector<double>(t.data<double>(), t.data<double>() + 4),
                  (std::vector<double>{0.5, -1e300, 3.25, 0.0}));
    }
    {
        // Keys in another order, no spaces in the shape, '<' on a one-byte type, rank 0.
        const Bytes f = npy_file("{'shape': (), 'fortran_order': False, 'descr': '<i1'}", Bytes().u8(0xF6));
        const Tensor t = parse_npy(f.b.data(), f.size(), "i1.npy");
        EXPECT_EQ(t.dtype(), DType::I8);
        EXPECT_EQ(t.shape(), Shape{});
        EXPECT_EQ(t.numel(), 1);
        EXPECT_EQ(t.data<int8_t>()[0], -10);
    }
    {
        const Bytes f = npy_file("{'descr':'<u4','fortran_order':False,'shape':(2,3)}",
                                 Bytes().u32(1).u32(2).u32(3).u32(4).u32(5).u32(0xFFFFFFFFu));
        const Tensor t = parse_npy(f.b.data(), f.size(), "u4.npy");
        EXPECT_EQ(t.dtype(), DType::U32);
        EXPECT_EQ(t.shape(), (Shape{2, 3}));
        EXPECT_EQ(t.data<uint32_t>()[5], 0xFFFFFFFFu);
    }
    {
        const Bytes f = npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
                                 Bytes().u8(1).u8(0).u8(1));
        const Tensor t = parse_npy(f.b.data(), f.size(), "b1.npy");
        EXPECT_EQ(t.dtype(), DType::Bool);
        EXPECT_EQ(t.shape(), (Shape{3}));
    }
}

TEST(NcnnFormatNpy, SharedFilesHaveTheirDocumentedShapes)
{
    const std::vector<std::pair<std::string, Shape>> files = {
        {"models/resnet18/input.npy", {1, 3, 224, 224}},
        {"models/resnet18/ncnn_input.npy", {3, 224, 224}},
        {"models/resnet18/ncnn_output.npy", {1000}},
        {"models/resnet18/output.npy", {1, 1000}},
        {"models/mobilenet_v2/ncnn_input.npy", {3, 224, 224}},
        {"models/mobilenet_v2/ncnn_output.npy", {1000}},
        {"models/broadcasts/input.npy", {1, 8, 12, 16}},
        {"models/dynamic_reshape/output.npy", {1, 1536}},
        {"models/resizes/output0.npy", {1, 12, 40, 48}},
        {"models/resizes/output1.npy", {1, 3, 13, 17}},
        {"models/tiny_vit/input.npy", {1, 3, 64, 64}},
        {"models/tiny_vit/output.npy", {1, 10}},
    };
    for (const auto& f : files) {
        SCOPED_TRACE(f.first);
        const Tensor t = read_npy(ktest::shared_path(f.first));
        EXPECT_EQ(t.dtype(), DType::F32);
        EXPECT_EQ(t.shape(), f.second);
    }
    // README: ncnn_input.npy is input.npy without the batch dim.
    for (const char* m : {"resnet18", "mobilenet_v2"}) {
        const Tensor a = read_npy(ktest::shared_path(std::string("models/") + m + "/input.npy"));
        const Tensor b = read_npy(ktest::shared_path(std::string("models/") + m + "/ncnn_input.npy"));
        ASSERT_EQ(a.nbytes(), b.nbytes());
        EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0) << m;
    }
}

} // namespace
