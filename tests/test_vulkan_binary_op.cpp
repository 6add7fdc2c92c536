// BinaryOp on the Vulkan backend (lavapipe in CI) against the CPU backend,
// case for case with the CPU tests: every ncnn op over every row of ncnn's
// broadcast tables in both operand orders, with_scalar, numpy's rules up to
// rank 6 and unidirectional, ONNX's typed float ops; a layer the GPU lacks
// falls back to the CPU in the middle of a GPU graph; no device is a clear
// error. Skipped when this machine has no Vulkan device.
#include <gtest/gtest.h>

#include "binary_op_cases.h"
#include "layer_test_util.h"

#ifdef KESTREL_HAVE_VULKAN
#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace binary_op_cases;
using namespace vulkan_test;

// One BinaryOp layer "op" ("params" its param text) over a and b (b absent: with_scalar).
NetCase one_layer(const std::string& params, bool two_inputs)
{
    return NetCase(two_inputs ? "7767517\n3 3\nInput a 0 1 a\nInput b 0 1 b\nBinaryOp op 2 1 a b y " + params + "\n"
                              : "7767517\n2 2\nInput a 0 1 a\nBinaryOp op 1 1 a y " + params + "\n");
}

TEST(VulkanBinaryOp, EveryOpEveryNcnnTableRowBothOrders)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(3);
    for (int t = 0; t < 19; ++t) {
        const NetCase layer = one_layer("0=" + std::to_string(t), true);
        for (const Row& row : kRows)
            for (int order = 0; order < 2; ++order) {
                const Shape sa = shape_of(nmat_of(order == 0 ? row.a : row.b));
                const Shape sb = shape_of(nmat_of(order == 0 ? row.b : row.a));
                SCOPED_TRACE("op " + std::to_string(t) + " A " + shape_str(sa) + " B " + shape_str(sb));
                for (const float lo : {0.25f, -3.f}) // positive operands (pow, div well defined), then mixed signs
                    expect_matches_cpu(layer, {random_tensor(rng, sa, lo, 3.f), random_tensor(rng, sb, lo, 3.f)});
            }
    }
}

TEST(VulkanBinaryOp, WithScalarEveryOp)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(5);
    for (int t = 0; t < 19; ++t) {
        SCOPED_TRACE("op " + std::to_string(t));
        expect_matches_cpu(one_layer("0=" + std::to_string(t) + " 1=1 2=1.75", false),
                           {random_tensor(rng, {3, 5, 37}, 0.25f, 3.f)});
    }
}

// numpy's rule up to rank 6 (both operands stretched), unidirectional, and a
// large operand (many workgroups).
TEST(VulkanBinaryOp, NumpyAndUnidirectionalRules)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(6);
    const std::vector<std::pair<Shape, Shape>> numpy = {
        {{2, 3, 4}, {3, 4}}, {{2, 1, 3, 1, 2, 1}, {4, 1, 5}}, {{1, 2, 1, 3, 1, 2}, {5, 1, 4, 1, 2, 1}},
        {{7}, {3, 1}},       {{}, {2, 3}},                    {{300, 70, 9}, {70, 1}}};
    for (int t : {0, 1, 2, 3, 4, 10})
        for (const auto& c : numpy)
            for (int order = 0; order < 2; ++order) {
                const Shape& sa = order ? c.second : c.first;
                const Shape& sb = order ? c.first : c.second;
                SCOPED_TRACE("op " + std::to_string(t) + " A " + shape_str(sa) + " B " + shape_str(sb));
                expect_matches_cpu(one_layer("0=" + std::to_string(t) + " 20=1", true),
                                   {random_tensor(rng, sa, -2.f, 2.f), random_tensor(rng, sb, 0.5f, 2.f)});
            }
    expect_matches_cpu(one_layer("0=2 20=2", true), {random_tensor(rng, {2, 3, 4}, -1, 1), random_tensor(rng, {4}, -1, 1)});
}

// ONNX's typed table where float32 has a GPU form: Max / Min propagate NaN,
// Python's Mod, Fmod, Pow, PRelu.
TEST(VulkanBinaryOp, TypedFloatOps)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(8);
    for (int t : {0, 1, 2, 3, 4, 5, 6, 7, 8, 22}) {
        SCOPED_TRACE("typed op " + std::to_string(t));
        Tensor a = random_tensor(rng, {4, 1, 6}, -3.f, 3.f), b = random_tensor(rng, {5, 1}, -3.f, 3.f);
        a.data<float>()[1] = NAN;
        expect_matches_cpu(one_layer("0=" + std::to_string(t) + " 21=1", true), {a, b});
    }
}

// A custom op: y = x * x + 1 (the GPU has no kernel for it).
class SquarePlusOne : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override { out[0] = in[0]; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        for (int64_t i = 0; i < in[0].numel(); ++i) out[0].data<float>()[i] = in[0].data<float>()[i] * in[0].data<float>()[i] + 1.f;
    }
};

// A layer type the GPU lacks (a custom op) between two GPU layers runs on the
// CPU, and the result is the CPU backend's.
TEST(VulkanBackend, LayersTheGpuLacksFallBackToTheCpu)
{
    REQUIRE_VULKAN();
    register_op("VulkanTestSquarePlusOne", [] { return std::make_unique<SquarePlusOne>(); });
    Net net;
    net.load_param_mem("7767517\n5 5\nInput a 0 1 a\nInput b 0 1 b\nBinaryOp add 2 1 a b s 0=0\n"
                       "VulkanTestSquarePlusOne custom 1 1 s r\nBinaryOp mul 2 1 r b y 0=2\n",
                       "mixed.param");
    std::mt19937 rng(9);
    const Tensor a = random_tensor(rng, {3, 8, 8}, 0.f, 2.f), b = random_tensor(rng, {3, 1, 1}, 0.f, 2.f);
    std::vector<Tensor> outs;
    std::map<std::string, std::string> where;
    for (auto backend : {Options::Backend::CPU, Options::Backend::Vulkan}) {
        Session s(net, on(backend));
        s.set_input("a", a);
        s.set_input("b", b);
        outs.push_back(s.get("y"));
        where = s.layer_devices();
    }
    EXPECT_NE(where.at("add"), "cpu");
    EXPECT_EQ(where.at("custom"), "cpu");
    EXPECT_NE(where.at("mul"), "cpu");
    for (int64_t i = 0; i < outs[0].numel(); ++i) EXPECT_NEAR(outs[1].data<float>()[i], outs[0].data<float>()[i], 1e-6f);
}

TEST(VulkanBackend, AMissingDeviceIsAClearError)
{
    REQUIRE_VULKAN();
    Net net;
    net.load_param_mem("7767517\n2 2\nInput a 0 1 a\nBinaryOp op 1 1 a y 0=0 1=1 2=1\n", "one.param");
    Options o = on(Options::Backend::Vulkan);
    o.device = 99;
    const std::string msg = layer_test::error_of([&] { Session s(net, o); });
    EXPECT_TRUE(layer_test::contains(msg, "Vulkan device 99 does not exist")) << msg;
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
