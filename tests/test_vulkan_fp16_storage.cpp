// Options::fp16_storage: layers whose shaders have a float16 variant store
// the tensors they read and write as float16 (arithmetic float32). Checked
// against the CPU backend within float16's precision, against the float32
// GPU run (the values must differ: the variant really ran), by the bytes the
// first layer copied in (half), and through layers without the variant
// (converted where they meet). Skipped without a Vulkan device, and without
// 16-bit storage on it.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include <fstream>
#include <sstream>

#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace vulkan_test;

#define REQUIRE_FP16_STORAGE()                                                                                         \
    REQUIRE_VULKAN();                                                                                                  \
    if (!vulkan::Device::open(0)->has_fp16_storage()) GTEST_SKIP() << "the device has no 16-bit storage"

Net weighted_net(const std::string& param, unsigned seed)
{
    Net zeros;
    zeros.load_param_mem(param, "fp16.param");
    zeros.load_model_zeros();
    const std::vector<uint8_t> bytes = random_model_bytes(zeros, seed);
    Net net;
    net.load_param_mem(param, "fp16.param");
    net.load_model_mem(bytes.data(), bytes.size());
    return net;
}

struct Result {
    Tensor y;
    std::map<std::string, int64_t> copied;
};

Result run_with(const Net& net, Options::Backend backend, bool fp16, const std::string& input, const Tensor& x,
                const std::string& output)
{
    Options o = on(backend);
    o.fp16_storage = fp16;
    Session s(net, o);
    s.set_input(input, x);
    Result r{s.get(output), {}};
    r.copied = s.layer_transfer_bytes();
    return r;
}

// Convolutions, activations, BinaryOp, pooling, Scale, Concat, InnerProduct,
// Softmax, and a CPU layer (CumulativeSum) whose tensors cross to and from
// the host as float32.
TEST(VulkanFp16Storage, LayersStoreFloat16WithinItsPrecision)
{
    REQUIRE_FP16_STORAGE();
    const Net net = weighted_net("7767517\n13 14\nInput input 0 1 in\n"
                                 "Convolution conv 1 1 in c 0=16 1=3 4=1 5=1 6=432 9=1\n"
                                 "Split split 1 2 c c1 c2\n"
                                 "ConvolutionDepthWise dw 1 1 c1 d 0=16 1=3 4=1 5=1 6=144 7=16\n"
                                 "Swish swish 1 1 d s\nBinaryOp add 2 1 s c2 a 0=0\n"
                                 "Pooling pool 1 1 a p 0=0 1=2 2=2\nCumulativeSum cs 1 1 p pc 0=0\n"
                                 "Scale scale 1 1 pc q 0=16 1=1\n"
                                 "Convolution conv2 1 1 p q2 0=16 1=1 5=1 6=256\n"
                                 "Concat cat 2 1 q q2 k 0=0\nInnerProduct fc 1 1 k f 0=20 1=1 2=40960\n"
                                 "Softmax prob 1 1 f out\n",
                                 21);
    std::mt19937 rng(22);
    const Tensor x = random_tensor(rng, {3, 16, 16}, -1.f, 1.f);
    const Result cpu = run_with(net, Options::Backend::CPU, false, "in", x, "out");
    const Result gpu32 = run_with(net, Options::Backend::Vulkan, false, "in", x, "out");
    const Result gpu16 = run_with(net, Options::Backend::Vulkan, true, "in", x, "out");
    EXPECT_LE(relative_difference(gpu32.y, cpu.y), 1e-4f);
    const float moved = relative_difference(gpu16.y, cpu.y);
    EXPECT_LE(moved, 1e-2f);
    EXPECT_GT(moved, 0.f) << "float16 storage gave the float32 result";
    // The input goes in as float16 (half the float32 bytes); conv's and dw's
    // outputs stay on the device; pool's goes out for the CPU layer (float16
    // on the device, float32 on the host), and the CPU layer's comes back in.
    EXPECT_EQ(gpu32.copied.at("conv"), 3 * 256 * 4);
    EXPECT_EQ(gpu16.copied.at("conv"), 3 * 256 * 2);
    EXPECT_EQ(gpu16.copied.at("dw"), 0);
    EXPECT_EQ(gpu16.copied.at("add"), 0);
    EXPECT_EQ(gpu16.copied.at("pool"), 16 * 64 * 2);
    EXPECT_EQ(gpu16.copied.at("scale"), 16 * 64 * 2);
}

// Layers the networks below do not have, one at a time, with float16 storage.
TEST(VulkanFp16Storage, EachLayerWithinFloat16Precision)
{
    REQUIRE_FP16_STORAGE();
    using layer_test::P;
    std::mt19937 rng(23);
    const auto r = [&](const Shape& shape) { return random_tensor(rng, shape, -1.f, 1.f); };
    struct Case {
        std::string type;
        ParamDict pd;
        std::vector<layer_test::In> ins;
        std::vector<Tensor> weights;
    };
    const auto with_float = [](ParamDict pd, int id, float v) {
        pd.set_float(id, v);
        return pd;
    };
    const std::vector<Case> cases = {
        {"Reduction", layer_test::with_ints(P({{0, 0}, {1, 0}, {4, 1}, {5, 1}}), 3, {1, 2}), {r({4, 6, 7})}, {}},
        {"Deconvolution", P({{0, 3}, {1, 3}, {3, 2}, {5, 1}, {6, 54}}), {r({2, 5, 5})}, {r({54}), r({3})}},
        {"LayerNorm", P({{0, 7}, {2, 1}}), {r({4, 6, 7})}, {r({7}), r({7})}},
        {"Interp", with_float(with_float(P({{0, 2}}), 1, 2.f), 2, 1.5f), {r({3, 5, 6})}, {}},
        {"MatMul", P({}), {r({2, 3, 6, 5}), r({2, 3, 5, 7})}, {}},
        {"Eltwise", P({{0, 1}}), {r({3, 4, 5}), r({3, 4, 5}), r({3, 4, 5})}, {}},
        {"Padding", with_float(P({{0, 1}, {1, 2}, {2, 3}, {3, 0}}), 5, 0.7f), {r({3, 4, 5})}, {}},
        {"Gemm", P({{2, 0}, {3, 1}}), {r({6, 5}), r({7, 5})}, {}},
    };
    Options o = on(Options::Backend::Vulkan);
    o.fp16_storage = true;
    for (const Case& c : cases) {
        SCOPED_TRACE(c.type);
        const Net net = layer_test::layer_net(c.type, c.pd, c.ins, 1, c.weights);
        std::string device;
        const Tensor gpu = layer_test::run_layer_net(net, c.ins, 1, o, &device)[0];
        const Tensor cpu = layer_test::run_layer_net(net, c.ins, 1, Options{})[0];
        EXPECT_NE(device, "cpu");
        const float moved = relative_difference(gpu, cpu);
        EXPECT_LE(moved, 4e-3f);
        EXPECT_GT(moved, 0.f) << "float16 storage gave the float32 result";
    }
}

// Whole zoo networks with float16 storage stay close to the CPU's output
// (Concat, Slice, Crop, Permute, ShuffleChannel, Interp, LRN, Gemm,
// MultiHeadAttention, LayerNorm among their layers).
TEST(VulkanFp16Storage, ZooNetworksStayCloseToTheCpu)
{
    REQUIRE_FP16_STORAGE();
    struct Case {
        std::string name;
        Shape shape;
        std::string blob; // before a softmax that random weights saturate
    };
    for (const Case& c : {Case{"squeezenet", {3, 227, 227}, "output"}, Case{"mobilenet_v2", {3, 224, 224}, "fc7"},
                          Case{"resnet18", {3, 224, 224}, "fc1000"}, Case{"googlenet", {3, 224, 224}, "loss3/classifier"},
                          Case{"nanodet_m", {3, 320, 320}, "dis_pred_stride_8"},
                          Case{"vision_transformer", {3, 384, 384}, "cls_score"}}) {
        const std::string& name = c.name;
        SCOPED_TRACE(name);
        const std::string param = std::string(KESTREL_SHARED_DIR) + "/zoo/" + name + ".param";
        std::ifstream file(param);
        std::stringstream text;
        text << file.rdbuf();
        Net net = weighted_net(text.str(), 7);
        net.optimize();
        std::mt19937 rng(8);
        const Tensor x = random_tensor(rng, c.shape, -1.f, 1.f);
        const std::string in = net.input_names().at(0), out = c.blob;
        const Result cpu = run_with(net, Options::Backend::CPU, false, in, x, out);
        const Result gpu16 = run_with(net, Options::Backend::Vulkan, true, in, x, out);
        const float moved = relative_difference(gpu16.y, cpu.y);
        EXPECT_LE(moved, 2e-2f);
        EXPECT_GT(moved, 0.f);
    }
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
