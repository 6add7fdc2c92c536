// The shared ncnn-format reference models run and match ncnn's own outputs.
#include <cstdio>
#include <cstdlib>
#include <map>

#include "reference_util.h"
#include "test_helpers.h"
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

// `kestrel bench` prints benchncnn's line plus the median, each consistent
// with the others, and --profile lists the layers by their median time.
TEST(ModelBench, CliReportsMinMaxAvgMedianAndProfile)
{
    ktest::TempDir dir;
    ktest::write_file(dir.file("tiny.param"),
                      std::string("7767517\n2 2\nInput in 0 1 in 0=64 1=32 2=8\nReLU relu_layer 1 1 in out\n"));
    const ktest::CliResult r = ktest::run_cli({"bench", dir.file("tiny.param"), "--loops", "7", "--profile"});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    const size_t at = r.out.find("tiny.param  min =");
    ASSERT_NE(at, std::string::npos) << r.out;
    double tmin = -1, tmax = -1, avg = -1, med = -1;
    ASSERT_EQ(std::sscanf(r.out.c_str() + at, "tiny.param  min = %lf  max = %lf  avg = %lf  median = %lf", &tmin, &tmax,
                          &avg, &med),
              4)
        << r.out;
    EXPECT_GE(tmin, 0);
    EXPECT_LE(tmin, med);
    EXPECT_LE(med, tmax);
    EXPECT_LE(tmin, avg);
    EXPECT_LE(avg, tmax);
    EXPECT_NE(r.out.find("loop_count = 7"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("relu_layer"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("total of layer medians"), std::string::npos) << r.out;
}

} // namespace
} // namespace kestrel
