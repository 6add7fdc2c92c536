// Files written by earlier versions of `kestrel convert` keep loading: each
// legacy layer name (graph/legacy_layers.cpp) is read as today's layer, with
// its params moved, and gives bit for bit what today's form of the same layer
// gives (that form's semantics are tested with its family).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/graph.h"
#include "kestrel/kestrel.h"
#include "layer_test_util.h"

using namespace kestrel;
using namespace kestrel::layer_test;

namespace {

// A .param text: one Input layer per input blob, then `layer` (a layer line
// reading those blobs, writing blob "y").
std::string model_text(const std::vector<std::string>& inputs, const std::string& layer)
{
    std::string text = "7767517\n" + std::to_string(inputs.size() + 1) + " " + std::to_string(inputs.size() + 4) + "\n";
    for (const std::string& name : inputs) text += "Input " + name + "_in 0 1 " + name + "\n";
    return text + layer + "\n";
}

std::vector<Tensor> run_text(const std::string& text, const std::vector<std::pair<std::string, Tensor>>& inputs,
                             std::string* type = nullptr)
{
    Net net;
    net.load_param_mem(text);
    if (type) *type = net.graph().layers.back().type;
    Session session(net);
    for (const auto& [name, value] : inputs) session.set_input(name, value);
    return session.run(net.output_names());
}

struct LegacyCase {
    std::string legacy, today, today_type; // layer lines and today's type name
    std::vector<std::pair<std::string, Tensor>> inputs;
};

void expect_same_as_today(const LegacyCase& c)
{
    SCOPED_TRACE(c.legacy);
    std::vector<std::string> names;
    for (const auto& kv : c.inputs) names.push_back(kv.first);
    std::string type;
    const std::vector<Tensor> legacy = run_text(model_text(names, c.legacy), c.inputs, &type);
    EXPECT_EQ(type, c.today_type);
    const std::vector<Tensor> today = run_text(model_text(names, c.today), c.inputs);
    ASSERT_EQ(legacy.size(), today.size());
    for (size_t i = 0; i < legacy.size(); ++i) {
        ASSERT_EQ(legacy[i].shape(), today[i].shape());
        ASSERT_EQ(legacy[i].dtype(), today[i].dtype());
        EXPECT_EQ(0, std::memcmp(legacy[i].raw(), today[i].raw(), legacy[i].nbytes()));
    }
}

TEST(LegacyLayers, ConcatND)
{
    expect_same_as_today({"ConcatND c 2 1 a b y 0=1", "Concat c 2 1 a b y 0=1", "Concat",
                          {{"a", random_f32({2, 3, 4}, 1)}, {"b", random_f32({2, 5, 4}, 2)}}});
}

TEST(LegacyLayers, ReshapeND)
{
    // Targets given at run time take 20=dynamic=1.
    expect_same_as_today({"ReshapeND r 2 1 a s y 20=1", "Reshape r 2 1 a s y 20=1", "Reshape",
                          {{"a", random_f32({2, 3, 4}, 1)}, {"s", i64v({0, -1})}}});
    expect_same_as_today({"ReshapeND r 2 1 a s y 0=1 20=1", "Reshape r 2 1 a s y 21=1 20=1", "Reshape",
                          {{"a", Tensor({0, 3}, DType::F32)}, {"s", i64v({3, 0})}}});
    expect_same_as_today({"ReshapeND r 2 1 a s y 20=1", "Reshape r 2 1 a s y 20=1", "Reshape",
                          {{"a", random_f32({2, 3, 4}, 1)}, {"s", i64v({4, 6})}}});
}

TEST(LegacyLayers, FlattenSqueezeUnsqueeze)
{
    const Tensor x = random_f32({2, 1, 3, 1}, 3);
    expect_same_as_today({"FlattenND f 1 1 a y", "Flatten f 1 1 a y 0=1", "Flatten", {{"a", x}}});
    expect_same_as_today({"FlattenND f 1 1 a y 0=2", "Flatten f 1 1 a y 0=2", "Flatten", {{"a", x}}});
    expect_same_as_today({"SqueezeND s 1 1 a y", "Squeeze s 1 1 a y 21=1", "Squeeze", {{"a", x}}});
    expect_same_as_today({"SqueezeND s 2 1 a b y 20=1", "Squeeze s 2 1 a b y 20=1 21=1", "Squeeze",
                          {{"a", x}, {"b", i64v({-1})}}});
    expect_same_as_today({"Unsqueeze u 2 1 a b y 20=1", "ExpandDims u 2 1 a b y 20=1 21=1", "ExpandDims",
                          {{"a", x}, {"b", i64v({0, 5})}}});
}

TEST(LegacyLayers, Transpose)
{
    const Tensor x = random_f32({2, 3, 4, 5}, 4);
    expect_same_as_today({"Transpose t 1 1 a y -23300=4,3,1,0,2", "Permute t 1 1 a y -23301=4,3,1,0,2", "Permute", {{"a", x}}});
    expect_same_as_today({"Transpose t 1 1 a y", "Permute t 1 1 a y 2=1", "Permute", {{"a", x}}});
}

TEST(LegacyLayers, SplitND)
{
    const Tensor x = random_f32({2, 7}, 5);
    expect_same_as_today({"SplitND s 1 3 a y z w 0=1", "Slice s 1 3 a y z w 1=1", "Slice", {{"a", x}}});
    expect_same_as_today({"SplitND s 2 2 a b y z 0=-1 20=1", "Slice s 2 2 a b y z 1=-1 20=1", "Slice",
                          {{"a", x}, {"b", i64v({3, 4})}}});
}

TEST(LegacyLayers, SliceND)
{
    const Tensor x = random_f32({4, 6, 5}, 6);
    expect_same_as_today({"SliceND s 5 1 a b c d e y 20=1", "Crop s 5 1 a b c d e y 22=1 23=1", "Crop",
                          {{"a", x}, {"b", i64v({-1, 1})}, {"c", i64v({INT64_MIN, 5})}, {"d", i64v({0, 2})},
                           {"e", i64v({-2, 2})}}});
}

TEST(LegacyLayers, Pad)
{
    const Tensor x = random_f32({3, 4}, 7);
    // Pad's modes 0 constant, 1 reflect, 2 edge, 3 wrap are Padding's types 0, 2, 1, 3.
    const char* types[4] = {"0", "2", "1", "3"};
    for (int mode = 0; mode < 4; ++mode)
        expect_same_as_today({"Pad p 2 1 a b y 20=1 0=" + std::to_string(mode),
                              std::string("Padding p 2 1 a b y 20=1 21=1 4=") + types[mode], "Padding",
                              {{"a", x}, {"b", i64v({1, 2, 2, 1})}}});
}

TEST(LegacyLayers, ReduceND)
{
    const Tensor x = random_f32({3, 4, 5}, 8);
    expect_same_as_today({"ReduceND r 2 1 a b y 0=3 20=1", "Reduction r 2 1 a b y 0=3 20=1 21=1 4=1", "Reduction",
                          {{"a", x}, {"b", i64v({0, 2})}}});
    expect_same_as_today({"ReduceND r 2 1 a b y 0=8 1=0 20=1", "Reduction r 2 1 a b y 0=8 4=0 20=1 21=1", "Reduction",
                          {{"a", x}, {"b", i64v({-1})}}});
    expect_same_as_today({"ReduceND r 1 1 a y 0=2 2=1", "Reduction r 1 1 a y 0=2 21=1 22=1", "Reduction", {{"a", x}}});
}

TEST(LegacyLayers, MaxPoolAveragePool)
{
    const Tensor x = random_f32({1, 2, 7, 8}, 9);
    expect_same_as_today({"MaxPool p 1 2 a y i -23300=2,2,3 -23301=2,2,2 -23302=4,1,0,0,1 -23303=2,2,1 4=1 7=1",
                          "Pooling p 1 2 a y i 0=0 20=1 -23321=2,2,3 -23322=2,2,2 -23323=4,1,0,0,1 -23324=2,2,1 25=1 27=1",
                          "Pooling", {{"a", x}}});
    expect_same_as_today({"AveragePool p 1 1 a y -23300=2,3,3 -23301=2,2,2 5=1 6=1",
                          "Pooling p 1 1 a y 0=1 20=1 -23321=2,3,3 -23322=2,2,2 26=1 6=1", "Pooling", {{"a", x}}});
}

TEST(LegacyLayers, TileND)
{
    expect_same_as_today({"TileND t 2 1 a b y 20=1", "Tile t 2 1 a b y 20=1 21=1", "Tile",
                          {{"a", random_f32({2, 3}, 10)}, {"b", i64v({2, 3})}}});
}

TEST(LegacyLayers, CastND)
{
    const Tensor x = random_f32({2, 5}, 11, -300.f, 300.f);
    expect_same_as_today({"CastND c 1 1 a y 0=4", "Cast c 1 1 a y 2=4", "Cast", {{"a", x}}});       // int8
    expect_same_as_today({"CastND c 1 1 a y 0=0", "Cast c 1 1 a y 2=0", "Cast", {{"a", i64v({3, -4})}}}); // float32
    expect_same_as_today({"CastND c 2 1 a b y", "Cast c 2 1 a b y", "Cast", {{"a", x}, {"b", i64v({1})}}});
}

TEST(LegacyLayers, ArgMaxND)
{
    const Tensor x = f32({2, 4}, {3, 1, 3, 2, -1, 5, 5, 0});
    expect_same_as_today({"ArgMaxND m 1 1 a y 0=1 1=0 2=1", "ArgMax m 1 1 a y 20=1 21=1 22=0 23=1", "ArgMax", {{"a", x}}});
}

TEST(LegacyLayers, DropoutND)
{
    const Tensor x = random_f32({2, 3}, 12);
    expect_same_as_today({"DropoutND d 1 2 a y m 0=0", "Dropout d 1 2 a y m 20=1 21=0", "Dropout", {{"a", x}}});
    expect_same_as_today({"DropoutND d 1 2 a y m", "Dropout d 1 2 a y m 20=1", "Dropout", {{"a", x}}});
}

TEST(LegacyLayers, EinsumGridSampleRecurrent)
{
    const Tensor a = random_f32({2, 3}, 13), b = random_f32({3, 4}, 14);
    expect_same_as_today({"EinsumND e 2 1 a b y 0=\"ij,jk->ik\"", "Einsum e 2 1 a b y 0=\"ij,jk->ik\"", "Einsum",
                          {{"a", a}, {"b", b}}});
    const Tensor x = random_f32({1, 2, 4, 5}, 15), grid = random_f32({1, 3, 3, 2}, 16, -1.2f, 1.2f);
    expect_same_as_today({"GridSampleND g 2 1 a b y 0=2 1=1 2=1", "GridSample g 2 1 a b y 0=3 1=2 2=1 20=1", "GridSample",
                          {{"a", x}, {"b", grid}}});
    // ONNX's nearest rounds halves to even: the upgraded layer keeps that.
    const Tensor halves = f32({1, 1, 1, 2}, {-0.5f, 0.f}), row = f32({1, 1, 1, 3}, {10, 20, 30});
    expect_same_as_today({"GridSampleND g 2 1 a b y 0=1 1=0 2=1", "GridSample g 2 1 a b y 0=2 1=1 2=1 20=1", "GridSample",
                          {{"a", row}, {"b", halves}}});
    const Tensor fmap = random_f32({1, 2, 6, 7}, 20), rois = f32({1, 4}, {1.f, 1.5f, 9.f, 8.f});
    expect_same_as_today({"RoiAlign r 3 1 a b c y 0=2 1=3 2=2 3=0.5 5=1",
                          "ROIAlign r 3 1 a b c y 20=1 21=2 22=3 23=2 24=0.5 26=1", "ROIAlign",
                          {{"a", fmap}, {"b", rois}, {"c", i64({1}, {0})}}});
    const Tensor seq = random_f32({3, 1, 2}, 17), w = random_f32({1, 4, 2}, 18), r = random_f32({1, 4, 4}, 19);
    expect_same_as_today({"RNNND n 3 2 a b c y h 0=4 1=0", "RNN n 3 2 a b c y h 20=1 21=4 22=0", "RNN",
                          {{"a", seq}, {"b", w}, {"c", r}}});
}

TEST(LegacyLayers, Resize)
{
    const Tensor x = random_f32({1, 2, 3, 4}, 23), scales = f32({4}, {1, 1, 2, 0.5f});
    expect_same_as_today({"Resize r 2 1 a b y 0=1 1=2 20=1", "Interp r 2 1 a b y 20=1 0=2 21=2 27=1", "Interp",
                          {{"a", x}, {"b", scales}}});
    expect_same_as_today({"Resize r 2 1 a b y 2=3 20=1", "Interp r 2 1 a b y 20=1 0=1 22=3 27=1", "Interp",
                          {{"a", x}, {"b", scales}}});
}

TEST(LegacyLayers, QuantizeLinearDequantizeLinear)
{
    const Tensor x = random_f32({2, 3, 2}, 24), scale = f32({3}, {0.5f, 0.02f, 2.f});
    expect_same_as_today({"QuantizeLinear q 2 1 a b y 0=1 1=4", "Quantize q 2 1 a b y 20=1 21=1 22=4", "Quantize",
                          {{"a", x}, {"b", scale}}});
    const Tensor q = run_text(model_text({"a", "b"}, "Quantize q 2 1 a b y 20=1 21=-2 22=4"), {{"a", x}, {"b", scale}})[0];
    expect_same_as_today({"DequantizeLinear d 2 1 a b y 0=-2", "Dequantize d 2 1 a b y 20=1 21=-2", "Dequantize",
                          {{"a", q}, {"b", scale}}});
}

TEST(LegacyLayers, NormalizeND)
{
    const Tensor x = random_f32({2, 3, 4}, 20), scale = random_f32({4}, 21), bias = random_f32({4}, 22);
    expect_same_as_today({"NormalizeND n 3 1 a b c y -23300=1,-1 1=1e-3", "LayerNorm n 3 1 a b c y 20=1 -23321=1,-1 22=1e-3",
                          "LayerNorm", {{"a", x}, {"b", scale}, {"c", bias}}});
    expect_same_as_today({"NormalizeND n 1 1 a y -23300=2,1,2 2=1", "LayerNorm n 1 1 a y 20=1 -23321=2,1,2 23=1",
                          "LayerNorm", {{"a", x}}});
}

TEST(Cast, NcnnCodesMapOntoDtypes)
{
    // ncnn's codes: 1 float32, 2 float16, 3 int8, 4 bfloat16; 0 keeps the input's type.
    const Tensor x = f32({3}, {1.5f, -2.25f, 100.f});
    const DType want[5] = {DType::F32, DType::F32, DType::F16, DType::I8, DType::BF16};
    for (int code = 0; code <= 4; ++code) {
        const std::vector<Tensor> y = run_text(model_text({"a"}, "Cast c 1 1 a y 1=" + std::to_string(code)), {{"a", x}});
        EXPECT_EQ(y[0].dtype(), want[code]) << code;
        EXPECT_EQ(y[0].to(DType::F32).data<float>()[1], code == 3 ? -2.f : -2.25f) << code;
    }
    EXPECT_TRUE(contains(error_of([&] { run_text(model_text({"a"}, "Cast c 1 1 a y 0=3 1=1"), {{"a", x}}); }), "type_from"));
}

} // namespace
