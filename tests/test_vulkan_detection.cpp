// Detection layers on the Vulkan backend against the CPU backend:
// Yolov3DetectionOutput over two grids and YoloDetectionOutput over one, with
// random features (hundreds of candidates through the sort and NMS) and with
// all-zero features (every score equal: the order of ties is ncnn's
// quicksort's, which the GPU must reproduce); DetectionOutput in Caffe's and
// MXNet's layouts, random and tied scores, with and without top-k limits. Skipped without a Vulkan device.
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

// Priors as (2, 4 * n): boxes inside [0, 1], then Caffe's variances.
Tensor caffe_priors(std::mt19937& rng, int64_t n)
{
    Tensor p({2, 4 * n}, DType::F32);
    std::uniform_real_distribution<float> u(0.f, 0.6f), size(0.1f, 0.4f);
    float* v = p.data<float>();
    for (int64_t i = 0; i < n; ++i) {
        v[4 * i] = u(rng), v[4 * i + 1] = u(rng);
        v[4 * i + 2] = v[4 * i] + size(rng), v[4 * i + 3] = v[4 * i + 1] + size(rng);
        const float var[4] = {0.1f, 0.1f, 0.2f, 0.2f};
        std::copy(var, var + 4, v + 4 * n + 4 * i);
    }
    return p;
}

TEST(VulkanDetection, SsdCaffeAndMxnetLayouts)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(83);
    const int64_t np = 60, nc = 4;
    const Tensor loc = random_tensor(rng, {4 * np}, -1.f, 1.f), priors = caffe_priors(rng, np);
    // Caffe's layout: conf (num_prior x num_class); random scores, then every score tied.
    Tensor tied({np * nc}, DType::F32);
    std::fill(tied.data<float>(), tied.data<float>() + tied.numel(), 0.4f);
    for (const Tensor& conf : {random_tensor(rng, {np * nc}, 0.f, 1.f), tied})
        for (const auto& [nms_top_k, keep_top_k] : {std::pair{20, 30}, std::pair{-1, -1}, std::pair{5, 8}}) {
            SCOPED_TRACE(std::to_string(nms_top_k) + " " + std::to_string(keep_top_k));
            ParamDict pd = layer_test::P({{0, int(nc)}, {2, nms_top_k}, {3, keep_top_k}});
            pd.set_float(1, 0.45f), pd.set_float(4, 0.3f);
            expect_layer_matches_cpu("DetectionOutput", pd, {loc, conf, priors});
            EXPECT_GT(layer_test::run1("DetectionOutput", pd, {loc, conf, priors}).dim(0), 3); // boxes survive
        }
    // MXNet's layout: priors (num_prior, 4), conf (num_class, num_prior), the layer's variances.
    ParamDict mx = layer_test::P({{0, -233}, {2, 20}, {3, 30}});
    mx.set_float(1, 0.45f), mx.set_float(4, 0.3f);
    Tensor boxes({np, 4}, DType::F32);
    std::copy(priors.data<float>(), priors.data<float>() + 4 * np, boxes.data<float>());
    expect_layer_matches_cpu("DetectionOutput", mx, {loc, random_tensor(rng, {nc, np}, 0.f, 1.f), boxes});
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
