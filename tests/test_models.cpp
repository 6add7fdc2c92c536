// The shared ncnn-format reference models run and match ncnn's own outputs.
#include <cstdio>
#include <cstdlib>
#include <map>

#include "reference_util.h"
#include "runtime/analysis.h"

namespace kestrel {
namespace {

using testing::expect_close_to_reference;
using testing::shared_path;

class SharedNcnnModel : public ::testing::TestWithParam<std::string> {
protected:
    std::string dir() const { return shared_path("models/" + GetParam() + "/"); }
};

TEST_P(SharedNcnnModel, MatchesNcnnOutputViaApi)
{
    Net net;
    net.load_param(dir() + "ncnn.param");
    net.load_model(dir() + "ncnn.bin");
    Session session(net);
    session.set_input("input", read_npy(dir() + "ncnn_input.npy"));
    const Tensor out = session.get("output");
    expect_close_to_reference(out, read_npy(dir() + "ncnn_output.npy"), 1e-4);
}

TEST_P(SharedNcnnModel, MatchesNcnnOutputViaCli)
{
    const std::string out_path = ::testing::TempDir() + "kestrel_cli_" + GetParam() + ".npy";
    std::remove(out_path.c_str());
    const std::string cmd = std::string(KESTREL_TOOL_PATH) + " run " + dir() + "ncnn.param --input input=" + dir() +
                            "ncnn_input.npy --output output=" + out_path;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    expect_close_to_reference(read_npy(out_path), read_npy(dir() + "ncnn_output.npy"), 1e-4);
}

TEST_P(SharedNcnnModel, TwoThreadsGiveBitIdenticalResults)
{
    Net net;
    net.load_param(dir() + "ncnn.param");
    net.load_model(dir() + "ncnn.bin");
    const Tensor input = read_npy(dir() + "ncnn_input.npy");
    Options two;
    two.threads = 2;
    Session s1(net), s2(net, two);
    s1.set_input("input", input);
    s2.set_input("input", input);
    EXPECT_TRUE(testing::bit_identical(s1.get("output"), s2.get("output")));
}

INSTANTIATE_TEST_SUITE_P(Models, SharedNcnnModel, ::testing::Values("resnet18", "mobilenet_v2"));

TEST(ModelInfo, Resnet18MacsMatchPublishedFigure)
{
    Net net;
    net.load_param(shared_path("models/resnet18/ncnn.param"));
    net.load_model_zeros();
    const ModelReport report = analyze_model(net, {{"input", TensorDesc{{3, 224, 224}, DType::F32}}});
    // ResNet-18 at 224x224 is 1.82 G multiply-accumulates.
    EXPECT_NEAR(static_cast<double>(report.total_macs), 1.82e9, 0.02 * 1.82e9);
    EXPECT_EQ(report.layers.back().outputs[0].shape, Shape({1000}));
    EXPECT_GT(report.peak_bytes, 0);
}

TEST(ModelInfo, CliReportsMacsAndPeakMemory)
{
    const std::string out = ::testing::TempDir() + "kestrel_info.txt";
    const std::string cmd = std::string(KESTREL_TOOL_PATH) + " info " + shared_path("models/resnet18/ncnn.param") +
                            " --shape input=3,224,224 > " + out;
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::FILE* f = std::fopen(out.c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string text;
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, f)) text.append(buf, n);
    std::fclose(f);
    EXPECT_NE(text.find("total MACs: 1.816 GMAC"), std::string::npos) << text.substr(text.size() - 300);
    EXPECT_NE(text.find("peak activation memory"), std::string::npos);
    EXPECT_NE(text.find("/conv1/Conv"), std::string::npos);
}

} // namespace
} // namespace kestrel
