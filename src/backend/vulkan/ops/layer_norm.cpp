// ncnn's LayerNorm (float32) on the GPU (shaders/layer_norm.comp) over the
// groups the CPU layer resolves (ops/norm/layer_norm_plan.h). ONNX's
// normalizations (any axes, double arithmetic) stay on the CPU.
#include "backend/vulkan/gpu_kernel.h"
#include "ops/norm/layer_norm_plan.h"

namespace kestrel::vulkan {

namespace {

struct PushGroups {
    uint32_t groups, size;
    int32_t affine;
    float eps;
};

} // namespace

std::unique_ptr<DeviceKernel> make_layer_norm_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                     const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    if (in.size() != 1 || out.size() != 1 || in[0].dtype != DType::F32) return nullptr;
    LayerNormPlan plan;
    if (!layer_norm_plan(*l.op, in[0].shape, plan)) return nullptr;
    const int64_t count = shape_numel(in[0].shape);
    if (count == 0 || count >= (int64_t{1} << 31) || plan.group_size <= 0 || count % plan.group_size != 0 ||
        plan.group_size > kMaxLoopIterations)
        return nullptr;
    const bool affine = plan.gamma.defined();
    if (affine && (plan.gamma.numel() != plan.group_size || plan.beta.numel() != plan.group_size)) return nullptr;
    const PushGroups p{uint32_t(count / plan.group_size), uint32_t(plan.group_size), affine ? 1 : 0, plan.eps};
    return std::make_unique<MapKernel<PushGroups>>(device, "layer_norm", p, count, count, uint64_t(p.groups), 64,
                                                   std::vector<Tensor>{plan.gamma, plan.beta});
}

} // namespace kestrel::vulkan
