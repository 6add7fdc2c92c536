// Helpers of the Vulkan backend's tests: skip without a device, run a net on
// a backend, compare the GPU's output with the CPU backend's.
#pragma once
#ifdef KESTREL_HAVE_VULKAN
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "backend/vulkan/device.h"
#include "graph/graph.h"
#include "frontend/ncnn/model_bin.h"
#include "kestrel/kestrel.h"
#include "layer_test_util.h"

namespace kestrel::vulkan_test {

inline bool have_device()
{
    static const bool have = !vulkan::Device::list().empty();
    return have;
}

#define REQUIRE_VULKAN()                                                                                               \
    if (!kestrel::vulkan_test::have_device()) GTEST_SKIP() << "no Vulkan device"

inline Options on(Options::Backend backend)
{
    Options o;
    o.backend = backend;
    return o;
}

inline Tensor random_tensor(std::mt19937& rng, const Shape& shape, float lo, float hi)
{
    std::uniform_real_distribution<float> u(lo, hi);
    Tensor t(shape, DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
    return t;
}

// Largest |a - b| over the largest |b| (b the reference; 0 when both are
// all zeros); shapes must match.
inline float relative_difference(const Tensor& a, const Tensor& b)
{
    EXPECT_EQ(a.shape(), b.shape());
    if (a.shape() != b.shape()) return INFINITY;
    float peak = 0.f, worst = 0.f;
    for (int64_t i = 0; i < b.numel(); ++i) {
        peak = std::max(peak, std::fabs(b.data<float>()[i]));
        worst = std::max(worst, std::fabs(a.data<float>()[i] - b.data<float>()[i]));
    }
    return peak > 0.f ? worst / peak : worst > 0.f ? INFINITY : 0.f;
}

// The ncnn .bin of random float weights for the net's layers (loaded with
// load_model_zeros): a layer with num_output (param 0) gets He-scaled weights
// for its fan-in, BatchNorm positive statistics, the rest values in
// [-0.5, 0.5]; so activations stay near unit size through deep networks.
inline std::vector<uint8_t> random_model_bytes(const Net& net, unsigned seed)
{
    std::mt19937 rng(seed);
    std::vector<uint8_t> bytes;
    for (const Layer& l : net.graph().layers)
        for (const StoredWeight& w : l.weights) {
            StoredWeight r{w.value, w.encoding, {}};
            if (w.value.dtype() == DType::F32 && w.value.numel() > 0) {
                const int64_t n = w.value.numel(), outputs = l.params.get_int(0, 0);
                float lo = -0.5f, hi = 0.5f;
                if (l.type == "BatchNorm") lo = 0.5f, hi = 1.5f;
                else if (outputs > 0 && n % outputs == 0 && n > outputs)
                    hi = std::sqrt(6.f / static_cast<float>(n / outputs)), lo = -hi;
                r.value = random_tensor(rng, w.value.shape(), lo, hi);
            }
            write_ncnn_weight(r, bytes);
        }
    return bytes;
}

// A net of inputs "a" (and "b") and output "y".
struct NetCase {
    Net net;
    explicit NetCase(const std::string& param_text) { net.load_param_mem(param_text, "case.param"); }
    // The output on `backend`, and where layer `layer` ran.
    Tensor run(Options::Backend backend, const std::vector<Tensor>& in, const std::string& layer = "",
               std::string* device = nullptr) const
    {
        Session s(net, on(backend));
        s.set_input("a", in[0]);
        if (in.size() > 1) s.set_input("b", in[1]);
        const Tensor y = s.get("y");
        if (device) *device = s.layer_devices().at(layer);
        return y;
    }
};

// GPU against CPU, with layer `layer` on the GPU: equal but for the GPU's own
// rounding of transcendental functions, `tolerance` of the value's magnitude.
inline void expect_matches_cpu(const NetCase& c, const std::vector<Tensor>& in, const std::string& layer = "op",
                               float tolerance = 1e-5f)
{
    std::string device;
    const Tensor gpu = c.run(Options::Backend::Vulkan, in, layer, &device), cpu = c.run(Options::Backend::CPU, in);
    ASSERT_NE(device, "cpu") << layer << " fell back to the CPU";
    ASSERT_EQ(gpu.shape(), cpu.shape());
    for (int64_t i = 0; i < cpu.numel(); ++i) {
        const float g = gpu.data<float>()[i], v = cpu.data<float>()[i];
        if (std::isnan(v) || std::isinf(v)) {
            ASSERT_TRUE((std::isnan(v) && std::isnan(g)) || g == v) << "at " << i << ": " << g << " vs " << v;
            continue;
        }
        ASSERT_NEAR(g, v, tolerance * std::max(1.f, std::fabs(v))) << "at " << i;
    }
}

// Layer `type` (layer_test::layer_net: inputs in0.., constants where marked,
// `weights`) on the GPU against the CPU, as expect_matches_cpu.
inline void expect_layer_matches_cpu(const std::string& type, const ParamDict& pd, const std::vector<layer_test::In>& ins,
                                     const std::vector<Tensor>& weights = {}, float tolerance = 1e-5f)
{
    const Net net = layer_test::layer_net(type, pd, ins, 1, weights);
    std::string device;
    const Tensor gpu = layer_test::run_layer_net(net, ins, 1, on(Options::Backend::Vulkan), &device)[0];
    const Tensor cpu = layer_test::run_layer_net(net, ins, 1, Options{})[0];
    ASSERT_NE(device, "cpu") << type << " fell back to the CPU";
    ASSERT_EQ(gpu.shape(), cpu.shape());
    for (int64_t i = 0; i < cpu.numel(); ++i) {
        const float g = gpu.data<float>()[i], v = cpu.data<float>()[i];
        if (std::isnan(v)) {
            ASSERT_TRUE(std::isnan(g)) << "at " << i << ": " << g << " vs NaN";
            continue;
        }
        ASSERT_NEAR(g, v, tolerance * std::max(1.f, std::fabs(v))) << "at " << i;
    }
}

} // namespace kestrel::vulkan_test
#endif // KESTREL_HAVE_VULKAN
