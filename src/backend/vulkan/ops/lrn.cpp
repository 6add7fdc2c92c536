// LRN (ncnn's, float32, ranks 1-3 as (c, h, w)) on the GPU (shaders/lrn.comp),
// across channels or within each channel, with the layer's params.
#include "backend/vulkan/gpu_kernel.h"
#include "ops/common/op_util.h"

namespace kestrel::vulkan {

namespace {

struct PushLrn {
    int32_t c, h, w, within, size;
    float alpha_div, beta, bias;
};

} // namespace

std::unique_ptr<DeviceKernel> make_lrn_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                              const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    if (in.size() != 1 || out.size() != 1 || in[0].dtype != DType::F32 || in[0].shape.empty() || in[0].shape.size() > 3)
        return nullptr;
    const int64_t count = shape_numel(in[0].shape);
    if (count == 0 || count >= (int64_t{1} << 31)) return nullptr;
    const ParamDict& pd = l.params;
    const NcnnDims n = ncnn_dims(in[0].shape);
    PushLrn p{};
    p.c = int32_t(n.c), p.h = int32_t(n.h), p.w = int32_t(n.w);
    p.within = pd.get_int(0, 0);
    p.size = pd.get_int(1, 5);
    if ((p.within != 0 && p.within != 1) || p.size <= 0) return nullptr;
    p.alpha_div = pd.get_float(2, 1.f) / float(p.within ? int64_t{p.size} * p.size : p.size);
    p.beta = pd.get_float(3, 0.75f);
    p.bias = pd.get_float(4, 1.f);
    return std::make_unique<MapKernel<PushLrn>>(device, "lrn", p, count, count, uint64_t(count));
}

} // namespace kestrel::vulkan
