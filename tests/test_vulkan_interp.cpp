// Interp on the Vulkan backend against the CPU backend: ncnn's form (nearest,
// bilinear, bicubic; scales, output sizes, align_corner; (c, h, w), (h, w) and
// 1-D inputs; a target blob; the filter form) and ONNX's Resize (every
// coordinate transform and nearest mode, cubic_coeff_a, exclude_outside,
// scales and sizes, tf_crop_and_resize with its fill). Skipped without a
// Vulkan device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace vulkan_test;
using layer_test::C;
using layer_test::In;
using layer_test::P;

TEST(VulkanInterp, NcnnForms)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(51);
    const Tensor chw = random_tensor(rng, {3, 7, 9}, -2.f, 2.f);
    for (int type : {1, 2, 3}) {
        SCOPED_TRACE(type);
        ParamDict scaled = P({{0, type}});
        scaled.set_float(1, 2.f), scaled.set_float(2, 1.5f);
        expect_layer_matches_cpu("Interp", scaled, {chw});
        ParamDict down = P({{0, type}});
        down.set_float(1, 0.5f), down.set_float(2, 0.75f);
        expect_layer_matches_cpu("Interp", down, {chw});
        expect_layer_matches_cpu("Interp", P({{0, type}, {3, 11}, {4, 5}}), {chw});
        if (type != 1) expect_layer_matches_cpu("Interp", P({{0, type}, {3, 11}, {4, 5}, {6, 1}}), {chw});
        expect_layer_matches_cpu("Interp", P({{0, type}, {3, 4}, {4, 13}}), {random_tensor(rng, {6, 10}, -2.f, 2.f)});
        expect_layer_matches_cpu("Interp", P({{0, type}, {5, 1}}), {chw, random_tensor(rng, {1, 5, 12}, 0.f, 1.f)});
    }
    expect_layer_matches_cpu("Interp", P({{0, 2}, {3, 3}, {4, 4}}), {random_tensor(rng, {5}, -2.f, 2.f)});
    expect_layer_matches_cpu("Interp", P({{0, 4}, {7, 3}, {3, 5}, {4, 6}, {8, 1}}), {chw});
}

TEST(VulkanInterp, OnnxResize)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(52);
    const Tensor x = random_tensor(rng, {1, 2, 6, 7}, -2.f, 2.f);
    const In up = C(layer_test::f32({4}, {1.f, 1.f, 1.7f, 2.3f})), down = C(layer_test::f32({4}, {1.f, 1.f, 0.6f, 0.5f}));
    const In sizes = C(layer_test::i64v({1, 2, 9, 4}));
    for (int type : {1, 2, 3})
        for (int coord : {0, 1, 2, 3, 4}) {
            SCOPED_TRACE(std::to_string(type) + " coord " + std::to_string(coord));
            for (int nearest : {0, 1, 2, 3}) {
                if (type != 1 && nearest > 0) break;
                const ParamDict pd = P({{20, 1}, {0, type}, {21, coord}, {22, nearest}});
                expect_layer_matches_cpu("Interp", pd, {x, up});
                expect_layer_matches_cpu("Interp", pd, {x, down});
                ParamDict by_size = pd;
                by_size.set_int(25, 1);
                expect_layer_matches_cpu("Interp", by_size, {x, sizes});
            }
        }
    ParamDict cubic = P({{20, 1}, {0, 3}, {21, 0}, {24, 1}});
    cubic.set_float(23, -0.5f);
    expect_layer_matches_cpu("Interp", cubic, {x, up});
    ParamDict crop = P({{20, 1}, {0, 2}, {21, 5}});
    crop.set_float(26, 7.5f);
    expect_layer_matches_cpu("Interp", crop,
                             {x, up, C(layer_test::f32({8}, {0.f, 0.f, -0.2f, 0.1f, 1.f, 1.f, 0.9f, 1.3f}))});
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
