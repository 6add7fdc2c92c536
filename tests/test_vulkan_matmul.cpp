// Products on the Vulkan backend against the CPU backend: Gemm (A, B, C as
// inputs or weights; transposes; every broadcast type of C; alpha, beta;
// output_transpose), MultiHeadAttention (one, two or three q/k/v inputs,
// other k/v dims, masks per head or shared), SDPA (scale given or default,
// a mask) and MatMul (vectors, matrices, equal and broadcast batch axes, one
// operand's or both operands' broadcast, transB). Skipped without a Vulkan
// device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace vulkan_test;
using layer_test::In;
using layer_test::P;

TEST(VulkanGemm, OperandsTransposesAndC)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(71);
    const int64_t M = 7, N = 9, K = 5;
    const auto r = [&](const Shape& s) { return random_tensor(rng, s, -1.f, 1.f); };
    for (int ta : {0, 1})
        for (int tb : {0, 1}) {
            SCOPED_TRACE(std::to_string(ta) + std::to_string(tb));
            const Tensor a = ta ? r({K, M}) : r({M, K}), b = tb ? r({N, K}) : r({K, N});
            ParamDict scaled = P({{2, ta}, {3, tb}});
            scaled.set_float(0, 0.5f), scaled.set_float(1, 2.f);
            expect_layer_matches_cpu("Gemm", scaled, {a, b, r({M, N})});
            expect_layer_matches_cpu("Gemm", P({{2, ta}, {3, tb}}), {a, b});
            expect_layer_matches_cpu("Gemm", P({{2, ta}, {3, tb}, {14, 1}}), {a, b, r({1})});
            // Constant B and C of each broadcast type.
            const int64_t sizes[5] = {1, M, M, M * N, N};
            for (int type = 0; type <= 4; ++type)
                expect_layer_matches_cpu("Gemm", P({{2, ta}, {3, tb}, {5, 1}, {6, 1}, {7, int(M)}, {8, int(N)}, {9, int(K)}, {10, type}}),
                                         {a}, {b, r({sizes[type]})});
        }
    expect_layer_matches_cpu("Gemm", P({}), {r({M, K}), r({K, N}), r({M, 1})});
    expect_layer_matches_cpu("Gemm", P({}), {r({M, K}), r({K, N}), r({1, N})});
}

TEST(VulkanMatMul, RanksBroadcastsAndTransB)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(31);
    const auto r = [&](const Shape& s) { return random_tensor(rng, s, -1.f, 1.f); };
    const std::vector<std::pair<Shape, Shape>> cases = {
        {{5}, {5}},             {{5}, {5, 7}},             {{6, 5}, {5}},         {{6, 5}, {5, 7}},
        {{3, 6, 5}, {3, 5, 7}}, {{2, 3, 6, 5}, {2, 3, 5, 7}}, {{3, 6, 5}, {5, 7}}, {{6, 5}, {4, 5, 7}},
        {{2, 1, 6, 5}, {1, 3, 5, 7}}, // both broadcast: one dispatch per batch
        {{4, 1, 6, 5}, {3, 5, 7}},    {{5}, {2, 3, 5, 7}},   {{2, 3, 6, 5}, {5}}, {{1, 9, 33}, {33, 17}}};
    for (const auto& [a, b] : cases) {
        SCOPED_TRACE(shape_str(a) + " . " + shape_str(b));
        expect_layer_matches_cpu("MatMul", P({}), {r(a), r(b)}, {}, 1e-4f);
        if (b.size() < 2) continue;
        Shape bt = b; // (..., N, K) with transB
        std::swap(bt[bt.size() - 1], bt[bt.size() - 2]);
        expect_layer_matches_cpu("MatMul", P({{0, 1}}), {r(a), r(bt)}, {}, 1e-4f);
    }
}

// MultiHeadAttention's eight weights for embed_dim E from q/k/v dims.
std::vector<Tensor> attention_weights(std::mt19937& rng, int64_t E, int64_t qdim, int64_t kdim, int64_t vdim)
{
    const auto r = [&](const Shape& s) { return random_tensor(rng, s, -0.5f, 0.5f); };
    return {r({E * qdim}), r({E}), r({E * kdim}), r({E}), r({E * vdim}), r({E}), r({qdim * E}), r({qdim})};
}

TEST(VulkanMultiHeadAttention, LayoutsAndMasks)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(72);
    const int E = 12, heads = 3;
    const Tensor q = random_tensor(rng, {5, 8}, -1.f, 1.f), k = random_tensor(rng, {7, 6}, -1.f, 1.f),
                 v = random_tensor(rng, {7, 10}, -1.f, 1.f);
    expect_layer_matches_cpu("MultiHeadAttention", P({{0, E}, {1, heads}, {2, E * 8}, {3, 8}, {4, 8}}), {q},
                             attention_weights(rng, E, 8, 8, 8), 1e-4f);
    expect_layer_matches_cpu("MultiHeadAttention", P({{0, E}, {1, heads}, {2, E * 8}, {3, 6}, {4, 6}}), {q, k},
                             attention_weights(rng, E, 8, 6, 6), 1e-4f);
    expect_layer_matches_cpu("MultiHeadAttention", P({{0, E}, {1, heads}, {2, E * 8}, {3, 6}, {4, 10}}), {q, k, v},
                             attention_weights(rng, E, 8, 6, 10), 1e-4f);
    for (const Shape& mask : {Shape{5, 7}, Shape{3, 5, 7}}) {
        SCOPED_TRACE(shape_str(mask));
        expect_layer_matches_cpu("MultiHeadAttention", P({{0, E}, {1, heads}, {2, E * 8}, {3, 6}, {4, 10}, {5, 1}}),
                                 {q, k, v, random_tensor(rng, mask, -2.f, 0.f)}, attention_weights(rng, E, 8, 6, 10), 1e-4f);
    }
}

TEST(VulkanSdpa, ScaleAndMask)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(73);
    const Tensor q = random_tensor(rng, {4, 6, 8}, -1.f, 1.f), k = random_tensor(rng, {4, 9, 8}, -1.f, 1.f),
                 v = random_tensor(rng, {4, 9, 5}, -1.f, 1.f);
    expect_layer_matches_cpu("SDPA", P({}), {q, k, v}, {}, 1e-4f);
    ParamDict scaled = P({{5, 1}});
    scaled.set_float(6, 0.3f);
    expect_layer_matches_cpu("SDPA", scaled, {q, k, v, random_tensor(rng, {4, 6, 9}, -2.f, 0.f)}, {}, 1e-4f);
    expect_layer_matches_cpu("SDPA", scaled, {q, k, v, random_tensor(rng, {1, 6, 9}, -2.f, 0.f)}, {}, 1e-4f);
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
