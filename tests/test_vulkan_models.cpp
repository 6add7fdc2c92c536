// Whole networks on the Vulkan backend against the CPU backend: every fp32
// network of ncnn's benchmark zoo (random weights, He-scaled so activations
// keep their size) and every ../shared/models model (as ONNX), each output
// within 1e-3 of its largest magnitude (the bound), and no layer on
// the CPU. Skipped without a Vulkan device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include <fstream>
#include <sstream>

#include "graph/graph.h"
#include "kestrel/npy.h"
#include "vulkan_test_util.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#endif

namespace kestrel {
namespace {

using namespace vulkan_test;

// Largest |gpu - cpu| within 1e-3 of the largest |cpu|.
void expect_close(const Tensor& gpu, const Tensor& cpu, const std::string& what)
{
    EXPECT_LE(relative_difference(gpu, cpu), 1e-3f) << what;
}

// The fp32 zoo networks and the input shape (c, h, w) benchncnn gives each.
std::vector<std::pair<std::string, Shape>> zoo_networks()
{
    std::ifstream in(std::string(KESTREL_SHARED_DIR) + "/zoo/shapes.txt");
    std::vector<std::pair<std::string, Shape>> v;
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.find("int8") != std::string::npos) continue;
        std::istringstream fields(line);
        std::string name;
        char comma = 0;
        int64_t w = 0, h = 0, c = 0;
        fields >> name >> w >> comma >> h >> comma >> c;
        v.push_back({name, Shape{c, h, w}});
    }
    return v;
}

// Detection layers decide which boxes survive by comparing scores: features
// a few ulps apart can keep another box. Their inputs are compared instead of
// their outputs (tests/test_vulkan_detection.cpp compares the layers' outputs
// on inputs both backends share).
bool is_detection(const std::string& type)
{
    return type == "DetectionOutput" || type == "YoloDetectionOutput" || type == "Yolov3DetectionOutput";
}

// The blobs compared: the outputs, and for outputs of detection layers the
// layer's inputs.
std::vector<std::string> compared_blobs(const Net& net)
{
    const Graph& g = net.graph();
    std::vector<std::string> names;
    for (int b : g.outputs) {
        const Layer& producer = g.layers[static_cast<size_t>(g.blobs[static_cast<size_t>(b)].producer)];
        if (!is_detection(producer.type)) {
            names.push_back(g.blobs[static_cast<size_t>(b)].name);
            continue;
        }
        for (int in : producer.bottoms) names.push_back(g.blobs[static_cast<size_t>(in)].name);
    }
    return names;
}

TEST(VulkanModels, ZooNetworksRunWhollyOnTheGpu)
{
    REQUIRE_VULKAN();
    const auto networks = zoo_networks();
    ASSERT_GE(networks.size(), 27u);
    for (const auto& [name, shape] : networks) {
        SCOPED_TRACE(name);
        const std::string param = std::string(KESTREL_SHARED_DIR) + "/zoo/" + name + ".param";
        Net zeros;
        zeros.load_param(param);
        zeros.load_model_zeros();
        const std::vector<uint8_t> weights = random_model_bytes(zeros, 7);
        Net net;
        net.load_param(param);
        net.load_model_mem(weights.data(), weights.size());
        net.optimize(); // as `kestrel` loads models
        std::mt19937 rng(8);
        const Tensor x = random_tensor(rng, shape, -1.f, 1.f);
        const std::vector<std::string> blobs = compared_blobs(net);
        std::vector<std::vector<Tensor>> outs;
        for (auto backend : {Options::Backend::CPU, Options::Backend::Vulkan}) {
            Session s(net, on(backend));
            s.set_input(net.input_names().at(0), x);
            outs.push_back(s.run(blobs));
            if (backend == Options::Backend::CPU) continue;
            for (const auto& [layer, device] : s.layer_devices()) {
                EXPECT_NE(device, "cpu") << layer << " fell back to the CPU";
            }
        }
        for (size_t k = 0; k < blobs.size(); ++k) expect_close(outs[1][k], outs[0][k], blobs[k]);
    }
}

#ifdef KESTREL_HAVE_ONNX
// Every ../shared/models model (as ONNX) on the Vulkan backend, no layer on
// the CPU: each output within 1e-3 of its largest magnitude of the CPU
// backend's (the bound).
TEST(VulkanModels, SharedModelsMatchTheCpu)
{
    REQUIRE_VULKAN();
    for (const char* name : {"broadcasts", "dynamic_reshape", "mobilenet_v2", "resizes", "resnet18",
                             "shufflenet_v2_x0_5", "squeezenet1_1", "tiny_vit"}) {
        SCOPED_TRACE(name);
        const std::string dir = std::string(KESTREL_SHARED_DIR) + "/models/" + name + "/";
        Net net;
        load_onnx(net, dir + "model.onnx");
        const Tensor x = read_npy(dir + "input.npy");
        std::vector<std::vector<Tensor>> outs;
        for (auto backend : {Options::Backend::CPU, Options::Backend::Vulkan}) {
            Session s(net, on(backend));
            s.set_input(net.input_names().at(0), x);
            outs.push_back(s.run(net.output_names()));
            if (backend != Options::Backend::Vulkan) continue;
            for (const auto& [layer, device] : s.layer_devices()) {
                EXPECT_NE(device, "cpu") << layer;
            }
        }
        for (size_t k = 0; k < outs[0].size(); ++k) expect_close(outs[1][k], outs[0][k], "output " + std::to_string(k));
    }
}
#endif

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
