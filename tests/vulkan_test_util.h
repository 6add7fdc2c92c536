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
#include "kestrel/kestrel.h"

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

} // namespace kestrel::vulkan_test
#endif // KESTREL_HAVE_VULKAN
