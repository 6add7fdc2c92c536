// Per-channel maps (Scale, BatchNorm, Bias, PReLU) and Eltwise on the Vulkan
// backend against the CPU backend: ranks 1-4, shared and per-channel values,
// with and without bias; Eltwise's ncnn forms (product, weighted sum, max) and
// ONNX's (Sum, Max / Min with NaN, Mean) over 1-4 inputs, broadcasting; LRN
// across and within channels; ncnn's LayerNorm. Skipped without a Vulkan
// device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include <limits>

#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace vulkan_test;
using layer_test::In;
using layer_test::P;

TEST(VulkanChannelOps, ScaleBatchNormBiasPReLU)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(41);
    const auto values = [&](int64_t n, float lo, float hi) { return random_tensor(rng, {n}, lo, hi); };
    for (const Shape& shape : {Shape{5, 6, 7}, Shape{4, 3}, Shape{6}, Shape{3, 2, 4, 5}}) {
        SCOPED_TRACE(shape_str(shape));
        const int64_t c = shape[0];
        const std::vector<In> x = {random_tensor(rng, shape, -3.f, 3.f)};
        expect_layer_matches_cpu("Scale", P({{0, int(c)}, {1, 1}}), x, {values(c, -2.f, 2.f), values(c, -1.f, 1.f)});
        expect_layer_matches_cpu("Scale", P({{0, int(c)}, {1, 0}}), x, {values(c, -2.f, 2.f)});
        ParamDict bn = P({{0, int(c)}});
        bn.set_float(1, 1e-3f);
        expect_layer_matches_cpu("BatchNorm", bn, x,
                                 {values(c, 0.5f, 2.f), values(c, -1.f, 1.f), values(c, 0.1f, 2.f), values(c, -1.f, 1.f)});
        expect_layer_matches_cpu("PReLU", P({{0, int(c)}}), x, {values(c, 0.f, 0.5f)});
        expect_layer_matches_cpu("PReLU", P({{0, 1}}), x, {values(1, 0.f, 0.5f)});
        expect_layer_matches_cpu("Bias", P({{0, 1}}), x, {values(1, -1.f, 1.f)});
    }
    expect_layer_matches_cpu("Bias", P({{0, 5}}), {random_tensor(rng, {5, 3, 3}, -1.f, 1.f)}, {values(5, -1.f, 1.f)});
}

TEST(VulkanEltwise, NcnnAndOnnxForms)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(42);
    const Shape shape{3, 5, 7};
    std::vector<In> x;
    for (int k = 0; k < 4; ++k) x.push_back(random_tensor(rng, shape, -2.f, 2.f));
    x[1].t.data<float>()[3] = std::numeric_limits<float>::quiet_NaN(); // Max / Min propagate it
    x[2].t.data<float>()[4] = std::numeric_limits<float>::quiet_NaN();
    for (size_t n = 1; n <= 4; ++n) {
        SCOPED_TRACE(n);
        const std::vector<In> ins(x.begin(), x.begin() + static_cast<long>(n));
        for (int op : {0, 1, 2}) {
            SCOPED_TRACE(op);
            expect_layer_matches_cpu("Eltwise", P({{0, op}}), ins);
        }
        std::vector<float> coeffs = {0.5f, -2.f, 1.25f, 3.f};
        coeffs.resize(n);
        ParamDict sum = P({{0, 1}});
        sum.set_floats(1, coeffs);
        expect_layer_matches_cpu("Eltwise", sum, ins);
        for (int op : {1, 2, 3, 4}) {
            SCOPED_TRACE(op);
            expect_layer_matches_cpu("Eltwise", P({{21, 1}, {0, op}}), ins);
        }
    }
}

// ONNX's Sum / Max / Min / Mean over inputs that broadcast (numpy), NaN included.
TEST(VulkanEltwise, OnnxFormsBroadcasting)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(45);
    std::vector<In> x = {random_tensor(rng, {2, 1, 4, 5}, -2.f, 2.f), random_tensor(rng, {3, 1, 5}, -2.f, 2.f),
                         random_tensor(rng, {5}, -2.f, 2.f), random_tensor(rng, {2, 3, 4, 1}, -2.f, 2.f)};
    x[1].t.data<float>()[2] = std::numeric_limits<float>::quiet_NaN();
    for (size_t n = 2; n <= 4; ++n)
        for (int op : {1, 2, 3, 4}) {
            SCOPED_TRACE(std::to_string(n) + " inputs, op " + std::to_string(op));
            expect_layer_matches_cpu("Eltwise", P({{21, 1}, {0, op}}), std::vector<In>(x.begin(), x.begin() + long(n)));
        }
}

TEST(VulkanLRN, AcrossAndWithinChannels)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(43);
    for (const Shape& shape : {Shape{7, 6, 5}, Shape{4, 9}, Shape{11}})
        for (int region : {0, 1})
            for (int size : {3, 5})
                for (float beta : {0.75f, 0.6f}) {
                    SCOPED_TRACE(shape_str(shape) + " region " + std::to_string(region));
                    ParamDict pd = P({{0, region}, {1, size}});
                    pd.set_float(2, 1e-2f), pd.set_float(3, beta), pd.set_float(4, 2.f);
                    expect_layer_matches_cpu("LRN", pd, {random_tensor(rng, shape, -3.f, 3.f)});
                }
}

TEST(VulkanLayerNorm, NcnnGroups)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(44);
    // (shape, affine_size): rows, planes and whole channels.
    const std::vector<std::pair<Shape, int>> cases = {
        {{17, 64}, 64}, {{4, 5, 6}, 6}, {{4, 5, 6}, 30}, {{3, 2, 4, 5}, 5}, {{3, 2, 4, 5}, 20}, {{3, 2, 4, 5}, 40}, {{50}, 50}};
    for (const auto& [shape, size] : cases)
        for (int affine : {0, 1}) {
            SCOPED_TRACE(shape_str(shape) + " " + std::to_string(size));
            ParamDict pd = P({{0, size}, {2, affine}});
            pd.set_float(1, 1e-5f);
            std::vector<Tensor> weights;
            if (affine) weights = {random_tensor(rng, {size}, 0.5f, 1.5f), random_tensor(rng, {size}, -1.f, 1.f)};
            expect_layer_matches_cpu("LayerNorm", pd, {random_tensor(rng, shape, -3.f, 5.f)}, weights, 1e-5f);
        }
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
