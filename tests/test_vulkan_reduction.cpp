// Reduction on the Vulkan backend against the CPU backend: every operation in
// ncnn's form (reduce_all, axes of ranks 2-4, keepdims, coeff) and ONNX's
// (axes input, keepdims, noop_with_empty_axes); groups too large for one
// invocation stay on the CPU. Skipped without a Vulkan device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace vulkan_test;
using layer_test::C;
using layer_test::P;

TEST(VulkanReduction, NcnnForm)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(61);
    for (int op = 0; op <= 10; ++op) {
        SCOPED_TRACE(op);
        const float lo = op == 9 ? 0.1f : -2.f; // LOGSUM: a positive sum
        const Tensor x3 = random_tensor(rng, {4, 5, 6}, lo, 2.f), x4 = random_tensor(rng, {3, 4, 2, 5}, lo, 2.f);
        ParamDict all = P({{0, op}, {1, 1}});
        all.set_float(2, 0.5f);
        expect_layer_matches_cpu("Reduction", all, {x3});
        for (const std::vector<int>& axes : {std::vector<int>{0}, {1, 2}, {-1}, {0, 2}})
            for (int keep : {0, 1}) {
                ParamDict pd = P({{0, op}, {1, 0}, {4, keep}, {5, 1}});
                pd.set_ints(3, axes);
                expect_layer_matches_cpu("Reduction", pd, {x3});
                expect_layer_matches_cpu("Reduction", pd, {x4});
            }
        expect_layer_matches_cpu("Reduction", P({{0, op}, {1, 0}}), {random_tensor(rng, {17}, lo, 2.f)});
    }
}

TEST(VulkanReduction, OnnxForm)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(62);
    const Tensor x = random_tensor(rng, {2, 3, 4, 5}, 0.1f, 2.f);
    for (int op : {0, 2, 3, 4, 5, 6, 7, 8, 9, 10})
        for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, {-1, 0}, {1, 2, 3}})
            for (int keep : {0, 1}) {
                SCOPED_TRACE(op);
                expect_layer_matches_cpu("Reduction", P({{21, 1}, {0, op}, {4, keep}}), {x, C(layer_test::i64v(axes))});
            }
    expect_layer_matches_cpu("Reduction", P({{21, 1}, {0, 0}, {4, 1}}), {x});
    expect_layer_matches_cpu("Reduction", P({{21, 1}, {0, 0}, {22, 1}}), {x, C(Tensor({0}, DType::I64))});
}

// A group past the iterations one invocation may loop (vulkan::kMaxLoopIterations)
// stays on the CPU: on lavapipe the loop would end early.
TEST(VulkanReduction, HugeGroupsStayOnTheCpu)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(63);
    const std::vector<layer_test::In> x = {random_tensor(rng, {2, 70000}, -1.f, 1.f)};
    ParamDict pd = P({{0, 0}, {1, 0}, {5, 1}});
    pd.set_ints(3, {1});
    const Net net = layer_test::layer_net("Reduction", pd, x);
    std::string device;
    const Tensor gpu = layer_test::run_layer_net(net, x, 1, on(Options::Backend::Vulkan), &device)[0];
    EXPECT_EQ(device, "cpu");
    const Tensor cpu = layer_test::run_layer_net(net, x, 1, Options{})[0];
    for (int64_t i = 0; i < cpu.numel(); ++i) EXPECT_EQ(gpu.data<float>()[i], cpu.data<float>()[i]);
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
