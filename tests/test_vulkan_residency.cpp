// Tensors between GPU layers stay in device memory: the session links each
// GPU layer's inputs to the buffers of the GPU layers that wrote them
// (through views too), and copies a tensor between host and device only
// where a CPU layer, the caller or a callback reads it. Checked by the bytes
// each layer copied (Session::layer_transfer_bytes) and by the outputs, which
// must still be the CPU backend's. Skipped without a Vulkan device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace vulkan_test;

// Net `param` with random weights.
struct WeightedNet {
    Net net;
    explicit WeightedNet(const std::string& param)
    {
        Net zeros;
        zeros.load_param_mem(param, "residency.param");
        zeros.load_model_zeros();
        const std::vector<uint8_t> bytes = random_model_bytes(zeros, 11);
        net.load_param_mem(param, "residency.param");
        net.load_model_mem(bytes.data(), bytes.size());
    }
};

constexpr int64_t kFloat = 4;

// Blobs `names` on `backend`, with the bytes each device layer copied.
std::vector<Tensor> run_on(const Net& net, Options::Backend backend, const Tensor& x,
                           const std::vector<std::string>& names, std::map<std::string, int64_t>* copied = nullptr)
{
    Session s(net, on(backend));
    s.set_input("in", x);
    std::vector<Tensor> out = s.run(names);
    if (copied) *copied = s.layer_transfer_bytes();
    return out;
}

void expect_same(const Tensor& gpu, const Tensor& cpu)
{
    ASSERT_EQ(gpu.shape(), cpu.shape());
    for (int64_t i = 0; i < cpu.numel(); ++i)
        ASSERT_NEAR(gpu.data<float>()[i], cpu.data<float>()[i], 1e-4f * std::max(1.f, std::fabs(cpu.data<float>()[i])))
            << "at " << i;
}

// Blobs `names` on the GPU, checked against the CPU's; the bytes each GPU layer copied.
std::map<std::string, int64_t> checked_transfers(const Net& net, const Tensor& x, const std::vector<std::string>& names)
{
    std::map<std::string, int64_t> copied;
    const std::vector<Tensor> gpu = run_on(net, Options::Backend::Vulkan, x, names, &copied);
    const std::vector<Tensor> cpu = run_on(net, Options::Backend::CPU, x, names);
    for (size_t k = 0; k < names.size(); ++k) expect_same(gpu[k], cpu[k]);
    return copied;
}

// Convolution, ReLU, a Reshape view, InnerProduct: only the input goes in and
// the output comes out; unless the caller asks for a blob in between.
TEST(VulkanResidency, TensorsBetweenGpuLayersStayOnTheDevice)
{
    REQUIRE_VULKAN();
    const WeightedNet n("7767517\n5 5\nInput input 0 1 in\n"
                        "Convolution conv 1 1 in c 0=8 1=3 4=1 5=1 6=216\nReLU relu 1 1 c r\n"
                        "Reshape flat 1 1 r f 0=-1\nInnerProduct fc 1 1 f out 0=10 1=1 2=5120\n");
    std::mt19937 rng(1);
    const Tensor x = random_tensor(rng, {3, 8, 8}, -1.f, 1.f);
    std::map<std::string, int64_t> copied = checked_transfers(n.net, x, {"out"});
    EXPECT_EQ(copied.at("conv"), 3 * 8 * 8 * kFloat); // the input in
    EXPECT_EQ(copied.at("relu"), 0);
    EXPECT_EQ(copied.at("fc"), 10 * kFloat); // the output out
    EXPECT_EQ(copied.count("flat"), 0u);     // a view: no work

    // Asking for the ReLU's output (through the view) brings it to the host too.
    copied = checked_transfers(n.net, x, {"f", "out"});
    EXPECT_EQ(copied.at("relu"), 8 * 8 * 8 * kFloat);
    EXPECT_EQ(copied.at("fc"), 10 * kFloat);
}

// A CPU layer between GPU layers: the tensor goes to the host before it and
// back after it.
TEST(VulkanResidency, CpuLayerInTheMiddleGetsItsTensorsOnTheHost)
{
    REQUIRE_VULKAN();
    const WeightedNet n("7767517\n4 4\nInput input 0 1 in\n"
                        "Convolution conv 1 1 in c 0=4 1=1 5=1 6=12\nCumulativeSum sum 1 1 c s 0=2\n"
                        "Convolution conv2 1 1 s out 0=2 1=1 5=1 6=8\n");
    std::mt19937 rng(2);
    const Tensor x = random_tensor(rng, {3, 5, 6}, -1.f, 1.f);
    const std::map<std::string, int64_t> copied = checked_transfers(n.net, x, {"out"});
    EXPECT_EQ(copied.count("sum"), 0u); // on the CPU
    EXPECT_EQ(copied.at("conv"), (3 + 4) * 30 * kFloat);
    EXPECT_EQ(copied.at("conv2"), (4 + 2) * 30 * kFloat);
}

// Callbacks see every layer's output, so while any is set every device layer
// copies its outputs out; the values they see are the CPU's.
TEST(VulkanResidency, CallbacksSeeEveryOutput)
{
    REQUIRE_VULKAN();
    const WeightedNet n("7767517\n4 4\nInput input 0 1 in\n"
                        "Convolution conv 1 1 in c 0=4 1=3 4=1 5=1 6=108\nReLU relu 1 1 c r\n"
                        "Convolution conv2 1 1 r out 0=2 1=1 5=1 6=8\n");
    std::mt19937 rng(3);
    const Tensor x = random_tensor(rng, {3, 7, 7}, -1.f, 1.f);
    std::map<std::string, Tensor> seen[2];
    int k = 0;
    for (auto backend : {Options::Backend::CPU, Options::Backend::Vulkan}) {
        Session s(n.net, on(backend));
        s.set_callbacks(nullptr, [&](const OpEvent& e) { seen[k][e.layer_name] = e.outputs.at(0).clone(); });
        s.set_input("in", x);
        s.run({"out"});
        if (backend == Options::Backend::Vulkan) {
            EXPECT_EQ(s.layer_transfer_bytes().at("relu"), 4 * 49 * kFloat);
        }
        ++k;
    }
    for (const char* layer : {"conv", "relu", "conv2"}) {
        SCOPED_TRACE(layer);
        expect_same(seen[1].at(layer), seen[0].at(layer));
    }
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
