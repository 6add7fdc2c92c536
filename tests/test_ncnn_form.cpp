// ncnn_form(): ONNX-imported models rewritten in ncnn's conventions. The
// written .param is checked by ncnn's rules (ncnn_rules.h), and the rewritten
// model must compute exactly what the ONNX one does; models and layers that
// have no ncnn form are refused naming the layer.
#include <gtest/gtest.h>

#include <cstring>

#include "graph/graph.h"
#include "frontend/ncnn/export_form.h"
#include "kestrel/kestrel.h"
#include "kestrel/npy.h"
#include "kestrel/onnx.h"
#include "ncnn_rules.h"
#include "test_helpers.h"

namespace {

using namespace kestrel;

Tensor run_one(const Net& net, const std::string& input, const Tensor& x, const std::string& output)
{
    Session s(net);
    s.set_input(input, x);
    return s.get(output);
}

#ifdef KESTREL_HAVE_ONNX
Net onnx_model(const std::string& name)
{
    Net net;
    LoadOptions lo;
    lo.fuse_residuals = false; // ncnn's convolutions take no residual input
    net.set_load_options(lo);
    load_onnx(net, ktest::shared_path("models/" + name + "/model.onnx"));
    return net;
}

class OnnxToNcnnForm : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxToNcnnForm, FollowsNcnnRulesAndComputesTheOnnxModel)
{
    const Net onnx = onnx_model(GetParam());
    const Net ncnn = ncnn_form(onnx);
    EXPECT_TRUE(ktest::follows_ncnn_param_rules(ncnn.param_text()));
    EXPECT_EQ(ncnn.input_shape("input"), (Shape{3, 224, 224}));

    const Tensor x = read_npy(ktest::shared_path(std::string("models/") + GetParam() + "/input.npy")).to(DType::F32);
    const Tensor want = run_one(onnx, "input", x, "output");
    const Tensor got = run_one(ncnn, "input", x.reshaped({3, 224, 224}), "output");
    EXPECT_EQ(want.shape(), (Shape{1, 1000}));
    EXPECT_EQ(got.shape(), (Shape{1000}));
    ASSERT_EQ(want.numel(), got.numel());
    EXPECT_EQ(0, std::memcmp(want.raw(), got.raw(), want.nbytes())) << "same layers, same kernels: same bits";

    // Written and read back as ncnn files, it still computes the same.
    const ktest::TempDir dir;
    ncnn.save_param(dir.file("m.param"));
    ncnn.save_model(dir.file("m.bin"));
    Net loaded;
    loaded.load_param(dir.file("m.param"));
    loaded.load_model(dir.file("m.bin"));
    const Tensor again = run_one(loaded, "input", x.reshaped({3, 224, 224}), "output");
    EXPECT_EQ(0, std::memcmp(want.raw(), again.raw(), want.nbytes()));
}

INSTANTIATE_TEST_SUITE_P(SharedModels, OnnxToNcnnForm, ::testing::Values("resnet18", "mobilenet_v2", "squeezenet1_1"));

TEST(OnnxToNcnnForm, RefusesAModelWithLayersNcnnLacks)
{
    const Net onnx = onnx_model("shufflenet_v2_x0_5"); // Reshape/Gather/Constant on shapes
    EXPECT_TRUE(ktest::api_fails_with([&] { ncnn_form(onnx); }, {"Constant", "has no ncnn form"}));
}

TEST(OnnxToNcnnForm, RefusesFusedResidualSums)
{
    Net onnx;
    load_onnx(onnx, ktest::shared_path("models/resnet18/model.onnx")); // residual sums fused (default)
    EXPECT_TRUE(ktest::api_fails_with([&] { ncnn_form(onnx); }, {"Convolution", "residual", "has no ncnn form"}));
}
#endif

// Small graphs in the importer's form: Input 20=dims, batched layers, ONNX axes.
Net onnx_style(const std::string& layer_type, const ParamDict& params, const Shape& a, const Shape& b)
{
    Net net;
    ParamDict in_a, in_b;
    in_a.set_ints(20, std::vector<int>(a.begin(), a.end()));
    in_b.set_ints(20, std::vector<int>(b.begin(), b.end()));
    net.add_layer("Input", "a", {}, {"a"}, in_a, {});
    net.add_layer("Input", "b", {}, {"b"}, in_b, {});
    net.add_layer(layer_type, "op", {"a", "b"}, {"y"}, params, {});
    net.finish_graph();
    return net;
}

TEST(OnnxToNcnnForm, BinaryOpKeepsOnlyOneShapeOperands)
{
    ParamDict add;
    add.set_int(0, 0);
    add.set_int(20, 1); // ONNX broadcasting
    const Net same = ncnn_form(onnx_style("BinaryOp", add, {1, 3, 4, 5}, {1, 3, 4, 5}));
    EXPECT_FALSE(same.graph().layers.back().params.has(20));
    EXPECT_TRUE(ktest::follows_ncnn_param_rules(same.param_text()));
    EXPECT_EQ(same.input_shape("a"), (Shape{3, 4, 5}));

    // (3,4,5) + (3,1,5): ONNX broadcasts h; ncnn's rules for 3-D blobs are others.
    EXPECT_TRUE(ktest::api_fails_with([&] { ncnn_form(onnx_style("BinaryOp", add, {1, 3, 4, 5}, {1, 3, 1, 5})); },
                                      {"BinaryOp 'op'", "broadcasts"}));
}

TEST(OnnxToNcnnForm, ConcatAxesCountPastTheBatch)
{
    for (int axis : {1, 2, -1, -3}) {
        ParamDict concat;
        concat.set_int(0, axis);
        const Net n = ncnn_form(onnx_style("Concat", concat, {1, 2, 4, 5}, {1, 2, 4, 5}));
        const int want = axis < 0 ? axis + 4 - 1 : axis - 1;
        EXPECT_EQ(n.graph().layers.back().params.get_int(0, -9), want) << "ONNX axis " << axis;
        Session s(n);
        Tensor a({2, 4, 5}, DType::F32), b({2, 4, 5}, DType::F32);
        for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = float(i), b.data<float>()[i] = float(-i);
        s.set_input("a", a);
        s.set_input("b", b);
        Shape expected = {2, 4, 5};
        expected[static_cast<size_t>(want)] *= 2;
        EXPECT_EQ(s.get("y").shape(), expected) << "ONNX axis " << axis;
    }
    ParamDict batch_axis;
    batch_axis.set_int(0, 0);
    EXPECT_TRUE(ktest::api_fails_with([&] { ncnn_form(onnx_style("Concat", batch_axis, {1, 2, 4, 5}, {1, 2, 4, 5})); },
                                      {"Concat 'op'", "axis 0", "batch"}));
}

TEST(OnnxToNcnnForm, RefusesBatchesOfMoreThanOne)
{
    ParamDict add;
    add.set_int(0, 0);
    EXPECT_TRUE(ktest::api_fails_with([&] { ncnn_form(onnx_style("BinaryOp", add, {2, 3}, {2, 3})); },
                                      {"Input 'a'", "(2,3)", "batch axis of one"}));
}

#ifdef KESTREL_HAVE_ONNX
TEST(OnnxToNcnnForm, ConvertCommandWritesTheNcnnForm)
{
    const ktest::TempDir dir;
    const ktest::CliResult r = ktest::run_cli({"convert", ktest::shared_path("models/mobilenet_v2/model.onnx"),
                                               dir.file("m.param"), dir.file("m.bin"), "--ncnn"});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_TRUE(ktest::follows_ncnn_param_rules(ktest::read_file(dir.file("m.param"))));

    const ktest::CliResult refused = ktest::run_cli({"convert", ktest::shared_path("models/tiny_vit/model.onnx"),
                                                     dir.file("t.param"), dir.file("t.bin"), "--ncnn"});
    EXPECT_TRUE(ktest::cli_fails_with(refused, 1, {"has no ncnn form"}));
}
#endif

} // namespace
