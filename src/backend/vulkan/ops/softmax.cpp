// Softmax (float32) on the GPU (shaders/softmax.comp), along the axis the CPU
// layer resolves (ops/activation/softmax_lanes.h).
#include "backend/vulkan/gpu_kernel.h"
#include "ops/activation/softmax_lanes.h"

namespace kestrel::vulkan {

namespace {

struct PushLanes {
    uint32_t outer, n, inner;
};

} // namespace

std::unique_ptr<DeviceKernel> make_softmax_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                  const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    if (in.size() != 1 || out.size() != 1 || in[0].dtype != DType::F32 || in[0].shape.empty()) return nullptr;
    int64_t outer = 0, n = 0, inner = 0;
    if (!softmax_lanes(*l.op, in[0].shape, outer, n, inner)) return nullptr;
    const int64_t numel = shape_numel(in[0].shape);
    if (numel == 0 || numel >= (int64_t{1} << 32) || n > kMaxLoopIterations) return nullptr;
    const PushLanes lanes{static_cast<uint32_t>(outer), static_cast<uint32_t>(n), static_cast<uint32_t>(inner)};
    return std::make_unique<MapKernel<PushLanes>>(device, "softmax", lanes, numel, numel, uint64_t(outer * inner), 64);
}

} // namespace kestrel::vulkan
