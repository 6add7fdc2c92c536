// Detection layers on the Vulkan backend against the CPU backend:
// Yolov3DetectionOutput over two grids and YoloDetectionOutput over one, with
// random features (hundreds of candidates through the sort and NMS) and with
// all-zero features (every score equal: the order of ties is ncnn's
// quicksort's, which the GPU must reproduce); DetectionOutput in Caffe's and
// MXNet's layouts, random and tied scores, with and without top-k limits;
// and selections of thousands of boxes, whose sort and NMS walks take several
// runs of the shaders (their state kept on the device between runs). Skipped
// without a Vulkan device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include <numeric>

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

// Features whose decoding both backends round alike (the exponentials of 0
// and of +-100 only: 1, 0 or infinity), so that only the selection can tell
// them apart: offsets -100 / 0 / 100 (a box at a cell's corner or centre),
// sizes 0 (the anchor's), objectness and class logits 0 / 100: scores 1/3,
// 1/2 and 1, thousands of ties.
Tensor exact_yolo_features(std::mt19937& rng, int64_t boxes, int64_t classes, int64_t h, int64_t w)
{
    Tensor t({boxes * (5 + classes), h, w}, DType::F32);
    std::uniform_int_distribution<int> pick(-1, 1);
    for (int64_t ch = 0; ch < t.dim(0); ++ch) {
        const int64_t role = ch % (5 + classes); // x, y, w, h, objectness, classes
        for (int64_t i = 0; i < h * w; ++i) {
            const int v = role == 2 || role == 3 ? 0 : role >= 4 ? std::abs(pick(rng)) : pick(rng);
            t.data<float>()[ch * h * w + i] = 100.f * float(v);
        }
    }
    return t;
}

// Yolov3 at benchncnn's largest grids (52x52 and 26x26, three boxes a cell:
// 10140 candidates, every one past the threshold): the sort and the NMS walk
// take several runs.
TEST(VulkanDetection, ThousandsOfYoloBoxesTakeSeveralRuns)
{
    REQUIRE_VULKAN();
    const std::string param = "7767517\n3 3\nInput a 0 1 a\nInput b 0 1 b\n"
                              "Yolov3DetectionOutput op 2 1 a b y 0=3 1=3 2=0.3 3=0.45 "
                              "-23304=12,10,14,23,27,37,58,81,82,135,169,344,319 -23305=6,3,4,5,0,1,2 "
                              "-23306=2,16,32\n";
    const NetCase net(param);
    std::mt19937 rng(84);
    const std::vector<Tensor> in{exact_yolo_features(rng, 3, 3, 52, 52), exact_yolo_features(rng, 3, 3, 26, 26)};
    expect_matches_cpu(net, in, "op");
    EXPECT_GT(net.run(Options::Backend::Vulkan, in).dim(0), 1000); // the NMS walk keeps many
}

// DetectionOutput over 3000 priors and 4 classes: random scores (distinct),
// then scores in ten levels (ties), with and without top-k limits; boxes are
// the priors (loc 0: decoded alike on both backends).
TEST(VulkanDetection, ThousandsOfSsdBoxesTakeSeveralRuns)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(85);
    const int64_t np = 3000, nc = 4;
    const Tensor priors = caffe_priors(rng, np);
    Tensor levels = random_tensor(rng, {np * nc}, 0.f, 1.f);
    for (int64_t i = 0; i < levels.numel(); ++i) levels.data<float>()[i] = std::round(levels.data<float>()[i] * 10.f) / 10.f;
    for (const Tensor& conf : {random_tensor(rng, {np * nc}, 0.f, 1.f), levels})
        for (const auto& [nms_top_k, keep_top_k] : {std::pair{-1, -1}, std::pair{2500, 4000}}) {
            SCOPED_TRACE(std::to_string(nms_top_k) + " " + std::to_string(keep_top_k));
            ParamDict pd = layer_test::P({{0, int(nc)}, {2, nms_top_k}, {3, keep_top_k}});
            pd.set_float(1, 0.7f), pd.set_float(4, 0.05f);
            expect_layer_matches_cpu("DetectionOutput", pd, {Tensor::zeros({4 * np}), conf, priors});
            EXPECT_GT(layer_test::run1("DetectionOutput", pd, {Tensor::zeros({4 * np}), conf, priors}).dim(0), 1000);
        }
}

// Scores on which ncnn's quicksort (src/ops/detection/nms.h) takes about
// n^2 / 2 steps: McIlroy's adversary. The sort is run on unknown scores; each
// pivot, when chosen, gets the largest score not yet given (every unknown one
// compares below it), so each partition peels off one candidate; the
// candidates never chosen get the smallest scores at the end.
std::vector<float> quicksort_killer(int64_t n)
{
    std::vector<int64_t> at(static_cast<size_t>(n));
    std::iota(at.begin(), at.end(), 0);
    std::vector<float> score(static_cast<size_t>(n), -INFINITY); // -inf: not given yet
    float next = static_cast<float>(n);
    const auto s = [&](int64_t k) { return score[static_cast<size_t>(at[static_cast<size_t>(k)])]; };
    std::vector<std::pair<int64_t, int64_t>> ranges{{0, n - 1}};
    while (!ranges.empty()) {
        auto [lo, hi] = ranges.back();
        ranges.pop_back();
        while (lo < hi) {
            float& p = score[static_cast<size_t>(at[static_cast<size_t>((lo + hi) / 2)])];
            if (p == -INFINITY) p = next--;
            const float pivot = p;
            int64_t i = lo, j = hi;
            while (i <= j) {
                while (i <= hi && s(i) > pivot) ++i;
                while (j >= lo && s(j) < pivot) --j;
                if (i <= j) std::swap(at[static_cast<size_t>(i++)], at[static_cast<size_t>(j--)]);
            }
            if (lo < j) ranges.push_back({lo, j});
            lo = i;
        }
    }
    for (float& v : score)
        if (v == -INFINITY) v = next--;
    for (float& v : score) v = 0.5f + 0.5f * v / static_cast<float>(n + 1); // distinct scores in (0.5, 1)
    return score;
}

// The sort's worst case takes far more runs than a sort usually does (the
// host runs it until the device says it is done).
TEST(VulkanDetection, QuicksortWorstCaseRunsUntilSorted)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(86);
    const int64_t np = 3000;
    const std::vector<float> scores = quicksort_killer(np);
    Tensor conf({np * 2}, DType::F32); // background 0, then the class's score
    for (int64_t j = 0; j < np; ++j) {
        conf.data<float>()[2 * j] = 0.f;
        conf.data<float>()[2 * j + 1] = scores[static_cast<size_t>(j)];
    }
    ParamDict pd = layer_test::P({{0, 2}, {2, -1}, {3, -1}});
    pd.set_float(1, 0.7f), pd.set_float(4, 0.05f);
    expect_layer_matches_cpu("DetectionOutput", pd, {Tensor::zeros({4 * np}), conf, caffe_priors(rng, np)});
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
