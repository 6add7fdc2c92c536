// Scale, BatchNorm, Bias and PReLU (float32) on the GPU
// (shaders/channel_affine.comp), with the per-channel values the CPU layer
// computed at load (ops/norm/channel_affine_plan.h). Scales from an input stay
// on the CPU.
#include "backend/vulkan/gpu_kernel.h"
#include "ops/norm/channel_affine_plan.h"

namespace kestrel::vulkan {

namespace {

struct PushAffine {
    uint32_t count, inner;
    int32_t prelu, has_scale, has_bias, one_value;
};

} // namespace

std::unique_ptr<DeviceKernel> make_channel_affine_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                         const std::vector<TensorDesc>& in,
                                                         const std::vector<TensorDesc>& out)
{
    ChannelAffinePlan plan;
    if (in.size() != 1 || out.size() != 1 || in[0].dtype != DType::F32 || !channel_affine_plan(*l.op, in[0].shape, plan))
        return nullptr;
    const int64_t count = shape_numel(in[0].shape);
    if (count == 0 || count >= (int64_t{1} << 32)) return nullptr;
    const Tensor& values = plan.scale.defined() ? plan.scale : plan.bias;
    if (!values.defined() || values.dtype() != DType::F32 || (plan.bias.defined() && plan.bias.dtype() != DType::F32))
        return nullptr;
    PushAffine push{};
    push.count = static_cast<uint32_t>(count);
    push.inner = static_cast<uint32_t>(plan.inner);
    push.prelu = plan.form == ChannelAffinePlan::Form::PReLU ? 1 : 0;
    push.has_scale = plan.scale.defined() ? 1 : 0;
    push.has_bias = plan.bias.defined() ? 1 : 0;
    push.one_value = values.numel() == 1 ? 1 : 0;
    if (!push.one_value && values.numel() < plan.channels) return nullptr;
    return std::make_unique<MapKernel<PushAffine>>(device, "channel_affine", push, count, count, uint64_t(count), 256,
                                                   std::vector<Tensor>{plan.scale, plan.bias});
}

} // namespace kestrel::vulkan
