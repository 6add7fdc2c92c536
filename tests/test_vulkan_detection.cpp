// Detection layers on the Vulkan backend against the CPU backend:
// Yolov3DetectionOutput over two grids and YoloDetectionOutput over one, with
// random features (hundreds of candidates through the sort and NMS) and with
// all-zero features (every score equal: the order of ties is ncnn's
// quicksort's, which the GPU must reproduce). Skipped without a Vulkan device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace vulkan_test;

TEST(VulkanDetection, Yolov3RandomAndTiedScores)
{
    REQUIRE_VULKAN();
    const std::string param = "7767517\n3 3\nInput a 0 1 a\nInput b 0 1 b\n"
                              "Yolov3DetectionOutput op 2 1 a b y 0=3 1=2 2=0.3 3=0.45 "
                              "-23304=8,10,14,23,27,37,58,81,82 -23305=4,0,1,2,3 -23306=2,16,32\n";
    const NetCase net(param);
    std::mt19937 rng(81);
    for (const std::vector<Tensor>& in :
         {std::vector<Tensor>{random_tensor(rng, {16, 8, 8}, -3.f, 3.f), random_tensor(rng, {16, 4, 4}, -3.f, 3.f)},
          std::vector<Tensor>{Tensor::zeros({16, 8, 8}), Tensor::zeros({16, 4, 4})}}) {
        expect_matches_cpu(net, in, "op");
        EXPECT_GT(net.run(Options::Backend::Vulkan, in).dim(0), 5); // boxes survive NMS
    }
}

TEST(VulkanDetection, YoloV2RandomAndTiedScores)
{
    REQUIRE_VULKAN();
    const std::string param = "7767517\n2 2\nInput a 0 1 a\n"
                              "YoloDetectionOutput op 1 1 a y 0=4 1=3 2=0.1 3=0.45 -23304=6,1.1,1.4,2.3,2.7,3.7,5.8\n";
    const NetCase net(param);
    std::mt19937 rng(82);
    for (const Tensor& in : {random_tensor(rng, {27, 9, 7}, -3.f, 3.f), Tensor::zeros({27, 9, 7})}) {
        expect_matches_cpu(net, {in}, "op");
        EXPECT_GT(net.run(Options::Backend::Vulkan, {in}).dim(0), 5); // boxes survive NMS
    }
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
