// Convolution and ConvolutionDepthWise on the Vulkan backend against the CPU
// backend: kernel sizes, strides, dilations, explicit and SAME pads, a pad
// value, groups (one, several, depthwise), bias or not, every fused
// activation, the fused residual, and a batched (ONNX-style) layer;
// Deconvolution and DeconvolutionDepthWise (output pads, sizes, SAME cuts);
// InnerProduct. Skipped without a Vulkan device.
#include <gtest/gtest.h>

#ifdef KESTREL_HAVE_VULKAN
#include <cstring>

#include "vulkan_test_util.h"

namespace kestrel {
namespace {

using namespace vulkan_test;

struct ConvCase {
    std::string type; // Convolution, Deconvolution or their DepthWise
    int inch, h, w, outch, k, stride, dilation, pad, group;
    bool bias;
    std::string extra; // more params: activation, pad value, SAME pads
};

// ncnn .bin bytes: the weights tagged fp32 (tag 0), the bias raw.
std::string weights_bin(std::mt19937& rng, int64_t weights, int64_t bias)
{
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::string bytes(4, '\0');
    for (int64_t i = 0; i < weights + bias; ++i) {
        const float v = u(rng);
        bytes.append(reinterpret_cast<const char*>(&v), 4);
    }
    return bytes;
}

// The largest difference from the CPU's output within 1e-5 of its largest magnitude.
void expect_close_to_cpu(const Net& net, const std::vector<std::pair<std::string, Tensor>>& inputs, const std::string& layer)
{
    std::vector<Tensor> outs;
    std::string device;
    for (auto backend : {Options::Backend::CPU, Options::Backend::Vulkan}) {
        Session s(net, on(backend));
        for (const auto& in : inputs) s.set_input(in.first, in.second);
        outs.push_back(s.get("y"));
        device = s.layer_devices().at(layer);
    }
    ASSERT_NE(device, "cpu") << layer << " fell back to the CPU";
    ASSERT_EQ(outs[1].shape(), outs[0].shape());
    float peak = 0.f, worst = 0.f;
    for (int64_t i = 0; i < outs[0].numel(); ++i) {
        peak = std::max(peak, std::fabs(outs[0].data<float>()[i]));
        worst = std::max(worst, std::fabs(outs[0].data<float>()[i] - outs[1].data<float>()[i]));
    }
    EXPECT_LE(worst, 1e-5f * std::max(peak, 1.f)) << "peak " << peak;
}

// Each case as a one-layer net with random weights, on the GPU and the CPU.
void expect_cases_close_to_cpu(const std::vector<ConvCase>& cases, unsigned seed)
{
    std::mt19937 rng(seed);
    for (const ConvCase& c : cases) {
        SCOPED_TRACE(c.type + " k" + std::to_string(c.k) + " s" + std::to_string(c.stride) + " " + c.extra);
        const int64_t weights = int64_t{c.outch} * (c.inch / c.group) * c.k * c.k;
        const bool depthwise = c.type.find("DepthWise") != std::string::npos;
        const std::string params = "0=" + std::to_string(c.outch) + " 1=" + std::to_string(c.k) + " 2=" +
                                   std::to_string(c.dilation) + " 3=" + std::to_string(c.stride) + " 4=" +
                                   std::to_string(c.pad) + " 5=" + (c.bias ? "1" : "0") + " 6=" + std::to_string(weights) +
                                   (depthwise ? " 7=" + std::to_string(c.group) : "") + " " + c.extra;
        Net net;
        net.load_param_mem("7767517\n2 2\nInput a 0 1 a\n" + c.type + " op 1 1 a y " + params + "\n", "conv.param");
        const std::string bin = weights_bin(rng, weights, c.bias ? c.outch : 0);
        net.load_model_mem(bin.data(), bin.size(), "conv.bin");
        expect_close_to_cpu(net, {{"a", random_tensor(rng, {c.inch, c.h, c.w}, -1.f, 1.f)}}, "op");
    }
}

TEST(VulkanConvolution, GeometriesGroupsActivations)
{
    REQUIRE_VULKAN();
    const std::vector<ConvCase> cases = {
        {"Convolution", 3, 17, 19, 8, 3, 1, 1, 1, 1, true, ""},
        {"Convolution", 4, 16, 16, 6, 1, 1, 1, 0, 1, false, ""},
        {"Convolution", 5, 21, 18, 7, 5, 2, 1, 2, 1, true, "9=1"},
        {"Convolution", 6, 15, 15, 4, 3, 1, 2, 2, 1, true, "9=2 10=1,0.1"},
        {"ConvolutionDepthWise", 8, 14, 13, 8, 3, 2, 1, 1, 2, true, "9=3 10=2,-0.5,0.75"},
        {"Convolution", 3, 11, 12, 5, 3, 2, 1, 0, 1, true, "4=-233 9=4"},
        {"Convolution", 3, 9, 10, 4, 3, 1, 1, 1, 1, false, "18=0.5 9=5"},
        {"Convolution", 4, 10, 10, 4, 3, 1, 1, 1, 1, true, "9=6 10=2,0.1667,0.5"},
        {"Convolution", 4, 10, 10, 4, 3, 1, 1, 1, 1, true, "9=7"},
        {"ConvolutionDepthWise", 8, 19, 17, 8, 3, 1, 1, 1, 8, true, "9=1"},
        {"ConvolutionDepthWise", 6, 20, 20, 6, 5, 2, 1, 2, 6, false, ""},
        {"ConvolutionDepthWise", 8, 12, 12, 16, 3, 1, 1, 1, 4, true, ""},
    };
    expect_cases_close_to_cpu(cases, 21);
}

// Deconvolution / DeconvolutionDepthWise: strides, dilation, pads cut, output
// pads, output sizes with SAME cuts, groups, bias, activations.
TEST(VulkanDeconvolution, GeometriesGroupsActivations)
{
    REQUIRE_VULKAN();
    const std::vector<ConvCase> cases = {
        {"Deconvolution", 3, 7, 8, 5, 3, 2, 1, 0, 1, true, ""},
        {"Deconvolution", 4, 6, 5, 6, 4, 2, 1, 1, 1, false, "9=1"},
        {"Deconvolution", 3, 5, 6, 4, 3, 3, 2, 0, 1, true, "18=1 19=2"},
        {"Deconvolution", 4, 6, 6, 4, 3, 2, 1, -233, 1, true, "20=13 21=11 9=2 10=1,0.1"},
        {"Deconvolution", 2, 5, 7, 3, 5, 1, 1, 2, 1, true, "9=3 10=2,-0.5,0.75"},
        {"DeconvolutionDepthWise", 6, 7, 7, 6, 4, 2, 1, 1, 6, true, ""},
        {"DeconvolutionDepthWise", 8, 5, 6, 4, 3, 2, 1, 0, 2, true, "9=1"},
    };
    expect_cases_close_to_cpu(cases, 23);
}

// The residual the optimizer fuses (param 20: the last input added to the
// sums before the activation).
TEST(VulkanConvolution, FusedResidual)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(22);
    Net net;
    net.load_param_mem("7767517\n3 3\nInput a 0 1 a\nInput b 0 1 b\n"
                       "Convolution op 2 1 a b y 0=4 1=3 4=1 5=1 6=144 20=1 9=1\n",
                       "res.param");
    const std::string bin = weights_bin(rng, 144, 4);
    net.load_model_mem(bin.data(), bin.size(), "res.bin");
    expect_close_to_cpu(net, {{"a", random_tensor(rng, {4, 9, 9}, -1, 1)}, {"b", random_tensor(rng, {4, 9, 9}, -1, 1)}},
                        "op");
}

// InnerProduct: a flattened (c, h, w) input, a 2-D input row by row, bias or
// not, fused activations.
TEST(VulkanInnerProduct, FlattenedAndRowsWithActivations)
{
    REQUIRE_VULKAN();
    std::mt19937 rng(23);
    struct Case {
        Shape input;
        int outputs;
        bool bias;
        std::string extra;
    };
    for (const Case& c : {Case{{3, 5, 7}, 10, true, ""}, Case{{4, 33}, 17, false, "9=1"},
                          Case{{300}, 1000, true, "9=4"}, Case{{6, 16}, 8, true, "9=3 10=2,-0.25,0.5"}}) {
        SCOPED_TRACE(shape_str(c.input) + " " + c.extra);
        const int64_t num_input = c.input.size() == 2 ? c.input[1] : shape_numel(c.input);
        const int64_t weights = num_input * c.outputs;
        Net net;
        net.load_param_mem("7767517\n2 2\nInput a 0 1 a\nInnerProduct op 1 1 a y 0=" + std::to_string(c.outputs) +
                               " 1=" + (c.bias ? "1" : "0") + " 2=" + std::to_string(weights) + " " + c.extra + "\n",
                           "ip.param");
        const std::string bin = weights_bin(rng, weights, c.bias ? c.outputs : 0);
        net.load_model_mem(bin.data(), bin.size(), "ip.bin");
        expect_close_to_cpu(net, {{"a", random_tensor(rng, c.input, -1.f, 1.f)}}, "op");
    }
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_VULKAN
