// The layers that only move elements on the Vulkan backend (from their moves,
// ops/common/element_moves.h) against the CPU backend, bit for bit, over
// tests/element_move_cases.h. Skipped without a Vulkan device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include <cstring>

#include "element_move_cases.h"
#include "vulkan_test_util.h"

namespace kestrel {
namespace {

TEST(VulkanElementMoves, EveryMovingLayerMatchesTheCpu)
{
    REQUIRE_VULKAN();
    for (const element_move_cases::MoveCase& c : element_move_cases::cases()) {
        SCOPED_TRACE(c.type + " " + c.what);
        const Net net = layer_test::layer_net(c.type, c.pd, c.ins, c.outputs, c.weights);
        std::string device;
        const std::vector<Tensor> gpu =
            layer_test::run_layer_net(net, c.ins, c.outputs, vulkan_test::on(Options::Backend::Vulkan), &device);
        const std::vector<Tensor> cpu = layer_test::run_layer_net(net, c.ins, c.outputs, Options{});
        EXPECT_NE(device, "cpu");
        ASSERT_EQ(gpu.size(), cpu.size());
        for (size_t o = 0; o < cpu.size(); ++o) {
            ASSERT_EQ(gpu[o].shape(), cpu[o].shape()) << "output " << o;
            EXPECT_EQ(std::memcmp(gpu[o].raw(), cpu[o].raw(), cpu[o].nbytes()), 0) << "output " << o;
        }
    }
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
