// One-input maps on the Vulkan backend against the CPU backend: every op of
// ncnn's UnaryOp table over ranges inside and outside its domain, and the
// activation layers with their params; Softmax; the device time per layer.
// Skipped without a Vulkan device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include <map>

#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace vulkan_test;

NetCase one_layer(const std::string& type, const std::string& params)
{
    return NetCase("7767517\n2 2\nInput a 0 1 a\n" + type + " op 1 1 a y " + params + "\n");
}

TEST(VulkanUnaryOp, EveryNcnnUnaryOp)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(12);
    for (int t = 0; t < 28; ++t) {
        SCOPED_TRACE("op " + std::to_string(t));
        // Mostly inside every op's domain, then wide (NaNs where the CPU gives them).
        const float hi = (t >= 22 && t <= 24) ? 8.f : 0.95f; // sinh/asinh/cosh: wider; others in (-1, 1)
        for (const auto& range : {std::make_pair(-hi, hi), std::make_pair(1.f, 6.f), std::make_pair(-6.f, 6.f)})
            expect_matches_cpu(one_layer("UnaryOp", "0=" + std::to_string(t)),
                               {random_tensor(rng, {4, 33, 17}, range.first, range.second)}, "op", 2e-5f);
    }
}

TEST(VulkanUnaryOp, ActivationLayers)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(13);
    const std::vector<std::pair<std::string, std::string>> layers = {
        {"ReLU", ""},           {"ReLU", "0=0.1"},          {"Clip", "0=-0.5 1=1.25"}, {"Sigmoid", ""},
        {"Swish", ""},          {"HardSigmoid", ""},        {"HardSigmoid", "0=0.1667 1=0.5"},
        {"HardSwish", ""},      {"HardSwish", "0=0.1667 1=0.5"}, {"Mish", ""}, {"GELU", ""}, {"GELU", "0=1"},
        {"TanH", ""}};
    for (const auto& l : layers) {
        SCOPED_TRACE(l.first + " " + l.second);
        Tensor x = random_tensor(rng, {3, 40, 40}, -8.f, 8.f);
        x.data<float>()[0] = 100.f, x.data<float>()[1] = -100.f; // saturated ends
        expect_matches_cpu(one_layer(l.first, l.second), {x}, "op", 2e-6f);
    }
}

// Softmax along every axis of a 3-D input, and a 1-D one (normalized whole).
TEST(VulkanSoftmax, EveryAxis)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(14);
    // Values far apart: exp overflows unless the lane's maximum comes off first.
    for (const char* params : {"0=0", "0=1 1=1", "0=2 1=1", "0=-1 1=1"})
        expect_matches_cpu(one_layer("Softmax", params), {random_tensor(rng, {5, 7, 9}, -100.f, 100.f)}, "op", 1e-6f);
    expect_matches_cpu(one_layer("Softmax", "0=0"), {random_tensor(rng, {1000}, -10.f, 10.f)}, "op", 1e-6f);
}

// The "after" callback carries the device's own time for a layer on the GPU
// (lavapipe has timestamps), -1 for a layer on the CPU.
TEST(VulkanProfile, DeviceTimePerLayer)
{
    REQUIRE_VULKAN();
    Net net;
    net.load_param_mem("7767517\n3 3\nInput a 0 1 a\nUnaryOp op 1 1 a m 0=7\nCumulativeSum sum 1 1 m y 0=0\n", "t.param");
    Session s(net, on(Options::Backend::Vulkan));
    std::map<std::string, double> device_ms;
    s.set_callbacks(nullptr, [&](const OpEvent& e) { device_ms[e.layer_name] = e.device_ms; });
    std::mt19937 rng(9);
    s.set_input("a", random_tensor(rng, {64, 64}, -1.f, 1.f));
    s.get("y");
    EXPECT_GE(device_ms.at("op"), 0.0);
    EXPECT_LT(device_ms.at("op"), 10000.0);
    EXPECT_EQ(device_ms.at("sum"), -1.0);
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
