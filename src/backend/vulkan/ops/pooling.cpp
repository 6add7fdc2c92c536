// Pooling (2-D, float32; ncnn's form and ONNX's MaxPool / AveragePool) on the
// GPU (shaders/pool2d.comp), over the windows the CPU layer computes
// (ops/pool/pool_plan.h). Adaptive pooling, 1-D / 3-D, int8 and ONNX's Indices
// output stay on the CPU.
#include "backend/vulkan/gpu_kernel.h"
#include "ops/pool/pool_plan.h"

namespace kestrel::vulkan {

namespace {

struct PushWindows {
    int32_t planes, in_h, in_w, out_h, out_w, is_max;
    int32_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
    int32_t count_y0, count_y1, count_x0, count_x1;
};

int32_t narrow(int64_t v) { return static_cast<int32_t>(std::max<int64_t>(std::min<int64_t>(v, INT32_MAX), INT32_MIN)); }

} // namespace

std::unique_ptr<DeviceKernel> make_pooling_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                  const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    PoolPlan plan;
    if (!pooling_plan_2d(*l.op, in, out, plan) || out[0].dtype != DType::F32) return nullptr;
    const Shape& s = in[0].shape;
    const int64_t h = s[s.size() - 2], w = s[s.size() - 1], planes = shape_numel(s) / std::max<int64_t>(h * w, 1);
    const window::Axis &ay = plan.axes[0], &ax = plan.axes[1];
    if (shape_numel(s) >= (int64_t{1} << 31) || planes * ay.out * ax.out != shape_numel(out[0].shape)) return nullptr;
    PushWindows pw{};
    pw.planes = narrow(planes), pw.in_h = narrow(h), pw.in_w = narrow(w), pw.out_h = narrow(ay.out), pw.out_w = narrow(ax.out);
    pw.is_max = plan.max ? 1 : 0;
    pw.kernel_h = narrow(ay.kernel), pw.kernel_w = narrow(ax.kernel), pw.stride_h = narrow(ay.stride);
    pw.stride_w = narrow(ax.stride), pw.dilation_h = narrow(ay.dilation), pw.dilation_w = narrow(ax.dilation);
    pw.pad_top = narrow(ay.pad_begin), pw.pad_left = narrow(ax.pad_begin);
    pw.count_y0 = narrow(plan.counted[0].begin), pw.count_y1 = narrow(plan.counted[0].end);
    pw.count_x0 = narrow(plan.counted[1].begin), pw.count_x1 = narrow(plan.counted[1].end);
    const int64_t outputs = planes * ay.out * ax.out;
    return std::make_unique<MapKernel<PushWindows>>(device, "pool2d", pw, shape_numel(s), outputs, uint64_t(outputs));
}

} // namespace kestrel::vulkan
