// The shared PyTorch-exported ONNX cases run and match PyTorch's outputs,
// loaded directly and after `kestrel convert` to .param/.bin, and in bfloat16
// (Options::precision BF16) within 2e-2 of the largest output.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#include "kernels/bf16_gemm.h"
#include "kestrel/onnx.h"
#include "onnx_test_graph.h"
#include "reference_util.h"

namespace kestrel {
namespace {

using testing::expect_close_to_reference;
using testing::shared_path;

std::vector<std::string> reference_outputs(const std::string& dir)
{
    if (std::ifstream(dir + "output.npy").good()) return {"output.npy"};
    std::vector<std::string> files;
    for (int i = 0; std::ifstream(dir + "output" + std::to_string(i) + ".npy").good(); ++i)
        files.push_back("output" + std::to_string(i) + ".npy");
    return files;
}

// `outputs` names the blobs in the order of PyTorch's output files.
std::vector<Tensor> run_model(const Net& net, const std::string& dir, const std::vector<std::string>& outputs,
                              const Options& options = {})
{
    Session session(net, options);
    session.set_input(net.input_names().at(0), read_npy(dir + "input.npy"));
    return session.run(outputs);
}

void expect_matches_pytorch(const Net& net, const std::string& dir, const std::vector<std::string>& outputs)
{
    const std::vector<std::string> refs = reference_outputs(dir);
    ASSERT_EQ(outputs.size(), refs.size());
    const std::vector<Tensor> outs = run_model(net, dir, outputs);
    for (size_t i = 0; i < refs.size(); ++i) expect_close_to_reference(outs[i], read_npy(dir + refs[i]), 1e-4);
}

class SharedOnnxModel : public ::testing::TestWithParam<std::string> {
protected:
    std::string dir() const { return shared_path("models/" + GetParam() + "/"); }
};

TEST_P(SharedOnnxModel, MatchesPyTorch)
{
    Net net;
    load_onnx(net, dir() + "model.onnx");
    expect_matches_pytorch(net, dir(), net.output_names());
}

TEST_P(SharedOnnxModel, ConvertedModelMatchesPyTorch)
{
    const std::string base = ::testing::TempDir() + "kestrel_convert_" + GetParam();
    const std::string cmd = std::string(KESTREL_TOOL_PATH) + " convert " + dir() + "model.onnx " + base + ".param " +
                            base + ".bin > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    Net onnx_net, net;
    load_onnx(onnx_net, dir() + "model.onnx");
    net.load_param(base + ".param");
    net.load_model(base + ".bin");
    // A .param does not record which blobs are outputs, or their order: ask by name.
    expect_matches_pytorch(net, dir(), onnx_net.output_names());
}

// bfloat16 convolutions, InnerProducts and attention projections: within 2e-2
// of the largest output (measured: docs/precision.md). Where the CPU has
// bfloat16 dot products, the models with such layers must also differ from
// the fp32 run (else the test would pass without bfloat16 running at all).
TEST_P(SharedOnnxModel, Bf16MatchesPyTorchWithin2e2)
{
    Net net;
    load_onnx(net, dir() + "model.onnx");
    Options bf16;
    bf16.precision = Options::Precision::BF16;
    const std::vector<std::string> refs = reference_outputs(dir());
    const std::vector<Tensor> outs = run_model(net, dir(), net.output_names(), bf16);
    ASSERT_EQ(outs.size(), refs.size());
    for (size_t i = 0; i < refs.size(); ++i) {
        const Tensor ref = read_npy(dir() + refs[i]);
        const double worst = expect_close_to_reference(outs[i], ref, 2e-2);
        const Tensor r = ref.to(DType::F64);
        double largest = 0;
        for (int64_t j = 0; j < r.numel(); ++j) largest = std::max(largest, std::fabs(r.data<double>()[j]));
        std::printf("  %s output %zu: max |bf16 - PyTorch| / max |PyTorch| = %.2g\n", GetParam().c_str(), i,
                    worst / largest);
    }
    const bool has_gemm_layers = GetParam() != "broadcasts" && GetParam() != "dynamic_reshape" && GetParam() != "resizes";
    if (has_gemm_layers && bf16_gemm_has_dot_instructions()) {
        EXPECT_FALSE(testing::bit_identical(outs[0], run_model(net, dir(), net.output_names())[0]))
            << "the bfloat16 session gave the fp32 bits";
    }
}

INSTANTIATE_TEST_SUITE_P(Models, SharedOnnxModel,
                         ::testing::Values("squeezenet1_1", "mobilenet_v2", "resnet18", "shufflenet_v2_x0_5", "tiny_vit",
                                           "broadcasts", "dynamic_reshape", "resizes"));

TEST(OnnxImport, UnsupportedOperatorNamesNodeTypeAndOpset)
{
    // A model using an op we do not convert: the message names the node, the op type and the opset.
    const std::string path = "/usr/share/libonnx-testdata/data/node/test_bernoulli/model.onnx";
    if (!std::ifstream(path).good()) GTEST_SKIP() << "libonnx-testdata not installed";
    Net net;
    try {
        load_onnx(net, path);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("Bernoulli"), std::string::npos) << msg;
        EXPECT_NE(msg.find("opset 15"), std::string::npos) << msg;
        EXPECT_NE(msg.find("unsupported operator type"), std::string::npos) << msg;
    }
}

#ifdef KESTREL_HAVE_ONNX
// A graph input or output without a shape (its rank unknown), as some
// writers leave it and ONNX Runtime takes it: loads and runs.
TEST(OnnxImport, InputsAndOutputsWithoutAShapeLoad)
{
    layer_test::OnnxGraph g(13);
    g.input("x", {2, 3});
    g.node("Relu", {"x"}, {"y"});
    g.output("y", 2);
    g.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    g.graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    const Net net = g.load(true);
    Session session(net);
    session.set_input("x", layer_test::f32({2, 3}, {-1.f, 2.f, -3.f, 4.f, 0.5f, -0.5f}));
    const Tensor y = session.get("y");
    ASSERT_EQ(y.shape(), (Shape{2, 3}));
    const float want[] = {0.f, 2.f, 0.f, 4.f, 0.5f, 0.f};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(y.data<float>()[i], want[i]) << i;
    layer_test::OnnxGraph bad(13); // other checks still hold: a node reading an unknown tensor
    bad.input("x", {2});
    bad.node("Relu", {"nowhere"}, {"y"});
    bad.output("y", 1);
    bad.graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
    EXPECT_THROW(bad.load(true), Error);
}

// ONNX Runtime's contrib operators other than the ones we take are named in the error.
TEST(OnnxImport, UnknownContribOperatorIsNamedWithItsDomain)
{
    layer_test::OnnxGraph g(13);
    g.import_domain("com.microsoft", 1);
    g.input("x", {2});
    g.node("FusedGemm", {"x"}, {"y"})->set_domain("com.microsoft");
    g.output("y", 1);
    const std::string msg = layer_test::error_of([&] { g.load(true); });
    EXPECT_NE(msg.find("'FusedGemm' of domain 'com.microsoft' is not supported"), std::string::npos) << msg;
}
#endif // KESTREL_HAVE_ONNX

} // namespace
} // namespace kestrel
