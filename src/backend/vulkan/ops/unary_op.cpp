// One-input maps on the GPU (shaders/unary_op.comp): ncnn's UnaryOp table and
// the activation layers, float32, their params read as the CPU layers read
// them (src/ops/activation/activations.cpp).
#include <cfloat>

#include "backend/vulkan/gpu_kernel.h"
#include "ops/activation/activation.h"

namespace kestrel::vulkan {

namespace {

struct PushParams {
    int32_t op;
    uint32_t numel;
    float a, b;
};

// The shader's op and params for layer `l`, or op -1 when it has no GPU form.
PushParams shader_params(const Layer& l)
{
    const ParamDict& p = l.params;
    const std::string& t = l.type;
    if (t == "UnaryOp") {
        const int op = p.get_int(0, 0);
        return {p.get_int(21, 0) != 1 && op >= 0 && op <= 27 ? op : -1, 0, 0.f, 0.f};
    }
    // The activations Convolution fuses: 100 + Activation::Type.
    if (t == "ReLU") return {100 + Activation::LeakyReLU, 0, p.get_float(0, 0.f), 0.f};
    if (t == "Clip") return {100 + Activation::Clip, 0, p.get_float(0, -FLT_MAX), p.get_float(1, FLT_MAX)};
    if (t == "Sigmoid") return {100 + Activation::Sigmoid, 0, 0.f, 0.f};
    if (t == "Mish") return {100 + Activation::Mish, 0, 0.f, 0.f};
    if (t == "HardSwish") return {100 + Activation::HardSwish, 0, p.get_float(0, 0.2f), p.get_float(1, 0.5f)};
    if (t == "Swish") return {100 + Activation::Swish, 0, 0.f, 0.f};
    if (t == "HardSigmoid") return {44, 0, p.get_float(0, 0.2f), p.get_float(1, 0.5f)};
    if (t == "GELU") return {p.get_int(0, 0) != 0 ? 47 : 48, 0, 0.f, 0.f};
    if (t == "TanH") return {16, 0, 0.f, 0.f};
    return {-1, 0, 0.f, 0.f};
}

} // namespace

std::unique_ptr<DeviceKernel> make_unary_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    PushParams params = shader_params(l);
    if (params.op < 0 || in.size() != 1 || out.size() != 1 || in[0].dtype != DType::F32 || out[0].dtype != DType::F32)
        return nullptr;
    const int64_t n = shape_numel(in[0].shape);
    if (n >= (int64_t{1} << 32) || shape_numel(out[0].shape) != n) return nullptr;
    params.numel = static_cast<uint32_t>(n);
    return std::make_unique<MapKernel<PushParams>>(device, "unary_op", params, n, n, params.numel);
}

} // namespace kestrel::vulkan
