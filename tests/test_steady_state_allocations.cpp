// Prepare once, run many: after a Session's first run, a second run with the
// same input shapes allocates no tensor memory (activations, scratch and
// outputs reuse the first run's buffers; per-shape work was done in prepare),
// for every zoo network and every shared model.
#include <cctype>
#include <fstream>
#include <sstream>

#include "core/tensor_allocations.h"
#include "reference_util.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#endif

namespace kestrel {
namespace {

using testing::shared_path;

// The layers that allocated tensor memory in the second of two runs with the
// same inputs ("Type 'name' xN"); empty when none did.
std::string allocations_of_second_run(const Net& net, const std::map<std::string, Tensor>& inputs, int threads)
{
    Options options;
    options.threads = threads;
    Session session(net, options);
    std::string report;
    int64_t at_layer_start = 0, at_layer_end = 0;
    auto note = [&](const OpEvent& e, int64_t n, const char* where) {
        if (n > 0) report += e.layer_type + " '" + e.layer_name + "' " + where + "x" + std::to_string(n) + "; ";
    };
    for (int round = 0; round < 2; ++round) {
        if (round == 1)
            session.set_callbacks(
                [&](const OpEvent& e) {
                    at_layer_start = tensor_allocations();
                    note(e, at_layer_start - at_layer_end, "(its outputs) ");
                },
                [&](const OpEvent& e) {
                    at_layer_end = tensor_allocations();
                    note(e, at_layer_end - at_layer_start, "");
                },
                true); // blobs as stored: the plan of the first run, channel blocks included
        at_layer_end = tensor_allocations();
        const int64_t before = tensor_allocations();
        for (const auto& kv : inputs) session.set_input(kv.first, kv.second);
        session.run(net.output_names()); // results dropped, as a caller done with them
        if (round == 1 && report.empty() && tensor_allocations() != before)
            report = "the runtime itself x" + std::to_string(tensor_allocations() - before);
    }
    return report;
}

// One test per zoo network, so that ctest spreads them over the cores (the
// whole zoo under the sanitizers takes minutes).
class SteadyStateZoo : public ::testing::TestWithParam<testing::ZooModel> {};

TEST(SteadyState, TheZooHasItsNetworks) { EXPECT_EQ(testing::zoo_models().size(), 35u); }

TEST_P(SteadyStateZoo, AllocatesNothingAfterTheFirstRun)
{
    const testing::ZooModel& m = GetParam();
    Net net;
    net.load_param(shared_path("zoo/" + m.name + ".param"));
    net.load_model_zeros();
    Tensor x(m.shape);
    std::fill(x.data<float>(), x.data<float>() + x.numel(), 0.01f);
    std::map<std::string, Tensor> inputs;
    for (const std::string& input : net.input_names()) inputs[input] = x;
    for (int threads : {1, 2}) EXPECT_EQ(allocations_of_second_run(net, inputs, threads), "") << threads << " threads";
}

INSTANTIATE_TEST_SUITE_P(Zoo, SteadyStateZoo, ::testing::ValuesIn(testing::zoo_models()),
                         [](const ::testing::TestParamInfo<testing::ZooModel>& info) {
                             std::string name = info.param.name;
                             for (char& c : name)
                                 if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                             return name;
                         });

TEST(SteadyState, SharedModelsAllocateNothingAfterTheFirstRun)
{
    for (const char* name : {"broadcasts", "dynamic_reshape", "mobilenet_v2", "resizes", "resnet18", "shufflenet_v2_x0_5",
                             "squeezenet1_1", "tiny_vit"}) {
        SCOPED_TRACE(name);
        const std::string dir = shared_path(std::string("models/") + name + "/");
        if (std::ifstream(dir + "ncnn.param").good()) {
            Net net;
            net.load_param(dir + "ncnn.param");
            net.load_model(dir + "ncnn.bin");
            EXPECT_EQ(allocations_of_second_run(net, {{net.input_names().at(0), read_npy(dir + "ncnn_input.npy")}}, 2), "")
                << "ncnn model";
        }
#ifdef KESTREL_HAVE_ONNX
        Net net;
        load_onnx(net, dir + "model.onnx");
        EXPECT_EQ(allocations_of_second_run(net, {{net.input_names().at(0), read_npy(dir + "input.npy")}}, 2), "")
            << "ONNX model";
#endif
    }
}

TEST(SteadyState, AHeldResultIsNeverOverwritten)
{
    // The caller keeps the first run's output: the second run must not reuse its buffer.
    Net net;
    net.load_param(shared_path("zoo/squeezenet.param"));
    net.load_model_zeros();
    Session session(net);
    Tensor x({3, 227, 227});
    std::fill(x.data<float>(), x.data<float>() + x.numel(), 0.01f);
    session.set_input(net.input_names().at(0), x);
    const Tensor first = session.get(net.output_names().at(0));
    const Tensor kept = first.clone();
    std::fill(x.data<float>(), x.data<float>() + x.numel(), -0.5f);
    session.set_input(net.input_names().at(0), x);
    const Tensor second = session.get(net.output_names().at(0));
    EXPECT_NE(first.raw(), second.raw());
    EXPECT_TRUE(testing::bit_identical(first, kept));
}

} // namespace
} // namespace kestrel
