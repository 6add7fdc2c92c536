// Pooling on the Vulkan backend against the CPU backend: ncnn's pad modes
// (Caffe's ceil tail, explicit, SAME upper / lower), averages counting pads or
// not, global pooling, adaptive pooling that tiles the plane evenly, and
// ONNX's MaxPool / AveragePool (dilation, ceil mode, auto_pad,
// count_include_pad) on (N, C, H, W). Skipped without a Vulkan device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace vulkan_test;

NetCase pooling(const std::string& params)
{
    return NetCase("7767517\n2 2\nInput a 0 1 a\nPooling op 1 1 a y " + params + "\n");
}

TEST(VulkanPooling, NcnnPadModesAndCounts)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(31);
    for (const char* params : {"0=0 1=3 2=2", "0=1 1=3 2=2", "0=0 1=2 2=2 3=1 5=1", "0=1 1=3 2=2 3=1 5=1 6=1",
                               "0=1 1=3 2=2 3=1 5=1 6=0", "0=0 1=3 2=2 5=2", "0=1 1=3 2=2 5=2", "0=1 1=3 2=2 5=3 6=1",
                               "0=1 1=5 11=3 2=3 12=1 3=2 13=1 5=1", "0=0 4=1", "0=1 4=1"}) {
        SCOPED_TRACE(params);
        for (const Shape& shape : {Shape{3, 13, 11}, Shape{5, 8, 8}})
            expect_matches_cpu(pooling(params), {random_tensor(rng, shape, -2.f, 2.f)}, "op", 1e-6f);
    }
    // Adaptive windows that tile the plane: ONNX's GlobalAveragePool's form, and even tiles.
    for (const char* params : {"0=1 7=1 8=1 18=1", "0=0 7=1 8=4 18=2", "0=1 7=1 8=2 18=4"}) {
        SCOPED_TRACE(params);
        expect_matches_cpu(pooling(params), {random_tensor(rng, {3, 16, 12}, -2.f, 2.f)}, "op", 1e-6f);
    }
}

TEST(VulkanPooling, OnnxForms)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(32);
    for (const char* params : {"20=1 0=0 21=3,3 22=2,2 23=1,1,1,1", "20=1 0=0 21=3,3 22=1,1 24=2,2 23=2,2,2,2",
                               "20=1 0=1 21=3,3 22=2,2 25=1", "20=1 0=1 21=3,3 22=2,2 23=1,1,1,1 6=1",
                               "20=1 0=1 21=2,2 22=2,2 26=1", "20=1 0=0 21=3,2 22=2,1 26=2"}) {
        SCOPED_TRACE(params);
        expect_matches_cpu(pooling(params), {random_tensor(rng, {2, 3, 12, 13}, -2.f, 2.f)}, "op", 1e-6f);
    }
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
