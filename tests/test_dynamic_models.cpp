// Models exported from PyTorch with dynamic axes (scripts/gen_dynamic_models.py,
// run by CTest's gen_dynamic_models fixture into the build tree) run at every
// input shape without re-conversion and match PyTorch at each one.
#include <cstdlib>
#include <fstream>
#include <set>

#include "graph/graph.h"
#include "kestrel/onnx.h"
#include "ops/conv/conv_params.h"
#include "reference_util.h"

namespace kestrel {
namespace {

using testing::expect_close_to_reference;

std::string model_dir(const std::string& name)
{
    return std::string(KESTREL_DYNAMIC_MODELS_DIR) + "/" + name + "/";
}

// Skips (loudly) when the generator could not run: PyTorch is not installed.
// CI installs it, so there these tests always run.
bool have_model(const std::string& name)
{
    return std::ifstream(model_dir(name) + "model.onnx").good();
}

#define REQUIRE_MODEL(name)                                                                            \
    if (!have_model(name))                                                                             \
    GTEST_SKIP() << model_dir(name) << "model.onnx is missing: scripts/gen_dynamic_models.py needs " \
                 << "python3-torch python3-torchvision python3-onnx"

// One session runs every case in turn, so each shape change re-plans the
// session that ran the previous shape. `output` names the blob to compare
// (a converted .param does not record which blobs are outputs).
void expect_cases_match(const Net& net, const std::string& output, const std::string& dir,
                        const std::vector<std::string>& tags)
{
    Session session(net);
    for (const std::string& tag : tags) {
        SCOPED_TRACE(tag);
        session.set_input(net.input_names().at(0), read_npy(dir + "input_" + tag + ".npy"));
        const Tensor out = session.run({output}).at(0);
        expect_close_to_reference(out, read_npy(dir + "output_" + tag + ".npy"), 1e-4);
    }
}

const std::vector<std::string> kReshapeCases = {"b1", "b3", "b1_10x6", "b3_20x24", "b1"};

TEST(DynamicAxes, DynamicReshapeAtTwoBatchesAndTwoSpatialSizes)
{
    REQUIRE_MODEL("dynamic_reshape");
    Net net;
    load_onnx(net, model_dir("dynamic_reshape") + "model.onnx");
    // The symbolic dims survive import: the declared input shape keeps -1 there.
    const Shape declared = net.input_shape(net.input_names().at(0));
    ASSERT_EQ(declared.size(), 4u);
    EXPECT_EQ(declared[0], -1);
    EXPECT_EQ(declared[1], 8);
    EXPECT_EQ(declared[2], -1);
    EXPECT_EQ(declared[3], -1);
    expect_cases_match(net, net.output_names().at(0), model_dir("dynamic_reshape"), kReshapeCases);
}

TEST(DynamicAxes, ConvertedDynamicReshapeStaysDynamic)
{
    REQUIRE_MODEL("dynamic_reshape");
    const std::string base = ::testing::TempDir() + "kestrel_dynamic_reshape";
    const std::string cmd = std::string(KESTREL_TOOL_PATH) + " convert " + model_dir("dynamic_reshape") +
                            "model.onnx " + base + ".param " + base + ".bin > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    Net onnx_net, net;
    load_onnx(onnx_net, model_dir("dynamic_reshape") + "model.onnx");
    net.load_param(base + ".param");
    net.load_model(base + ".bin");
    expect_cases_match(net, onnx_net.output_names().at(0), model_dir("dynamic_reshape"), kReshapeCases);
}

TEST(DynamicAxes, Resnet18AtBatch1And4)
{
    REQUIRE_MODEL("resnet18");
    Net net;
    load_onnx(net, model_dir("resnet18") + "model.onnx");
    EXPECT_EQ(net.input_shape(net.input_names().at(0)).at(0), -1);
    expect_cases_match(net, net.output_names().at(0), model_dir("resnet18"), {"b1", "b4"});
}

// A static batch of 2 through sums the optimizer fuses into the convolutions
// (full, pointwise and depthwise): the residual input is split per sample
// with the convolution's own.
TEST(DynamicAxes, FusedResidualSumsAtAStaticBatchOf2)
{
    REQUIRE_MODEL("residual_b2");
    Net net;
    load_onnx(net, model_dir("residual_b2") + "model.onnx");
    int fused = 0;
    for (const Layer& l : net.graph().layers)
        if (l.type == "Convolution" || l.type == "ConvolutionDepthWise") fused += l.params.get_int(kResidualParam, 0) == 1;
    EXPECT_EQ(fused, 3);
    expect_cases_match(net, net.output_names().at(0), model_dir("residual_b2"), {"b2"});
}

// `model` converted by `kestrel convert` to .param/.bin (named after `tag`) and loaded into `net`.
void convert_with_the_tool(const std::string& model, const std::string& tag, Net& net)
{
    const std::string base = ::testing::TempDir() + "kestrel_" + tag;
    const std::string cmd =
        std::string(KESTREL_TOOL_PATH) + " convert " + model + " " + base + ".param " + base + ".bin > /dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    net.load_param(base + ".param");
    net.load_model(base + ".bin");
}

// A torch.jit.script'ed greedy decoder (a GRU cell run until it emits token
// 2, at most 12 steps), exported with an ONNX Loop: one session runs inputs
// that take 1, 2 and 12 iterations; the tokens match PyTorch's exactly, the
// final state closely. Converted to .param/.bin, the same.
TEST(DynamicAxes, ScriptedGreedyDecoderLoopsAsPyTorchDoes)
{
    REQUIRE_MODEL("greedy_decoder");
    const std::string dir = model_dir("greedy_decoder");
    Net onnx_net, converted;
    load_onnx(onnx_net, dir + "model.onnx");
    ASSERT_NO_FATAL_FAILURE(convert_with_the_tool(dir + "model.onnx", "greedy_decoder", converted));
    std::set<int64_t> steps;
    for (const Net* net : {&onnx_net, &converted}) {
        Session session(*net);
        for (int i = 0; i < 8; ++i) {
            const std::string tag = "h" + std::to_string(i);
            SCOPED_TRACE(tag);
            session.set_input(net->input_names().at(0), read_npy(dir + "input_" + tag + ".npy"));
            const std::vector<Tensor> out = session.run(onnx_net.output_names());
            const Tensor want = read_npy(dir + "output_" + tag + ".npy");
            ASSERT_EQ(out[0].shape(), want.shape());
            ASSERT_EQ(out[0].dtype(), DType::I64);
            for (int64_t t = 0; t < want.numel(); ++t)
                EXPECT_EQ(out[0].data<int64_t>()[t], want.data<int64_t>()[t]) << t;
            expect_close_to_reference(out[1], read_npy(dir + "output1_" + tag + ".npy"), 1e-4);
            steps.insert(want.numel());
        }
    }
    EXPECT_GE(steps.size(), 3u) << "the cases should take different numbers of iterations";
}

// A torch.jit.script'ed model that returns a list of tensors (per class, the
// boxes scoring above 0.5: a sequence built in an ONNX Loop, elements of their
// own row counts, some empty) gives PyTorch's list, as ONNX and converted.
TEST(DynamicAxes, ScriptedListOfTensorsAsPyTorchReturns)
{
    REQUIRE_MODEL("per_class_boxes");
    const std::string dir = model_dir("per_class_boxes");
    Net onnx_net, converted;
    load_onnx(onnx_net, dir + "model.onnx");
    ASSERT_NO_FATAL_FAILURE(convert_with_the_tool(dir + "model.onnx", "per_class_boxes", converted));
    bool saw_empty = false;
    for (const Net* net : {&onnx_net, &converted}) {
        Session session(*net);
        for (int n : {1, 5, 12, 40}) {
            const std::string tag = "n" + std::to_string(n);
            SCOPED_TRACE(tag);
            session.set_input(net->input_names().at(0), read_npy(dir + "input_" + tag + ".npy"));
            const Tensor list = session.get(onnx_net.output_names().at(0));
            ASSERT_TRUE(list.is_sequence());
            const std::vector<Tensor> items = list.items();
            size_t k = 0;
            for (; std::ifstream(dir + "output_" + tag + "_" + std::to_string(k) + ".npy").good(); ++k) {
                ASSERT_LT(k, items.size());
                const Tensor want = read_npy(dir + "output_" + tag + "_" + std::to_string(k) + ".npy");
                ASSERT_EQ(items[k].shape(), want.shape()) << "element " << k;
                saw_empty |= want.numel() == 0;
                if (want.numel()) expect_close_to_reference(items[k], want, 1e-5);
            }
            EXPECT_EQ(items.size(), k);
            EXPECT_EQ(k, 3u);
        }
    }
    EXPECT_TRUE(saw_empty) << "some case should keep no box for a class";
}

} // namespace
} // namespace kestrel
