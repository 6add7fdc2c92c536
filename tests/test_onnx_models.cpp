// The shared PyTorch-exported ONNX cases run and match PyTorch's outputs,
// loaded directly and after `kestrel convert` to .param/.bin.
#include <cstdlib>
#include <fstream>

#include "kestrel/onnx.h"
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
void expect_matches_pytorch(const Net& net, const std::string& dir, const std::vector<std::string>& outputs)
{
    Session session(net);
    session.set_input(net.input_names().at(0), read_npy(dir + "input.npy"));
    const std::vector<std::string> refs = reference_outputs(dir);
    ASSERT_EQ(outputs.size(), refs.size());
    const std::vector<Tensor> outs = session.run(outputs);
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

INSTANTIATE_TEST_SUITE_P(Models, SharedOnnxModel,
                         ::testing::Values("squeezenet1_1", "mobilenet_v2", "resnet18", "shufflenet_v2_x0_5", "tiny_vit",
                                           "broadcasts", "dynamic_reshape", "resizes"));

TEST(OnnxImport, UnsupportedOperatorNamesNodeTypeAndOpset)
{
    // A model using an op we do not convert: the message names the node, the op type and the opset.
    const std::string path = "/usr/share/libonnx-testdata/data/node/test_stft/model.onnx";
    if (!std::ifstream(path).good()) GTEST_SKIP() << "libonnx-testdata not installed";
    Net net;
    try {
        load_onnx(net, path);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("STFT"), std::string::npos) << msg;
        EXPECT_NE(msg.find("opset 17"), std::string::npos) << msg;
        EXPECT_NE(msg.find("unsupported operator type"), std::string::npos) << msg;
    }
}

} // namespace
} // namespace kestrel
