// Interp (float32; ncnn's form and ONNX's Resize: nearest, bilinear, bicubic,
// every coordinate rule) on the GPU: the tap tables the CPU layer makes
// (ops/resample/interp_plan.h) applied axis by axis
// (shaders/resample_axis.comp), the steps in one submission. A resize that
// keeps every axis is one identity step.
#include "backend/vulkan/gpu_kernel.h"
#include "ops/resample/interp_plan.h"

namespace kestrel::vulkan {

namespace {

struct PushAxis {
    uint32_t count, in_len, out_len, inner, taps;
    int32_t has_outside;
    float fill;
};

// Taps that keep axis 0 as it is.
AxisTaps identity_taps(int64_t len)
{
    AxisTaps t;
    t.resize(len, 1);
    for (int64_t i = 0; i < len; ++i) t.index[size_t(i)] = i, t.weight[size_t(i)] = 1.f;
    return t;
}

int64_t inner_of(const Shape& s, size_t axis)
{
    int64_t inner = 1;
    for (size_t k = axis + 1; k < s.size(); ++k) inner *= s[k];
    return inner;
}

// A table of the taps as a 32-bit tensor for the shader.
template <class T> Tensor table_of(const std::vector<T>& v, DType dtype)
{
    Tensor t({static_cast<int64_t>(v.size())}, dtype);
    for (size_t i = 0; i < v.size(); ++i) {
        if (dtype == DType::I32) t.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
        else t.data<float>()[i] = static_cast<float>(v[i]);
    }
    return t;
}

// One step per axis, each into its own buffer, the tables as constants; null past 32-bit sizes.
std::unique_ptr<DeviceKernel> steps_kernel(const std::shared_ptr<Device>& device, const ResamplePlan& plan, Shape shape,
                                           float fill)
{
    auto kernel = std::make_unique<StepsKernel>(device);
    const Buffer* src = kernel->input(0, shape_numel(shape));
    std::vector<AxisTaps> steps = plan.steps;
    if (steps.empty()) steps.push_back(identity_taps(shape[0]));
    for (const AxisTaps& t : steps) {
        const int64_t in_len = shape[t.axis], inner = inner_of(shape, t.axis);
        shape[t.axis] = t.out_len;
        const int64_t count = shape_numel(shape);
        if (count >= (int64_t{1} << 31) || int64_t(t.index.size()) >= (int64_t{1} << 31)) return nullptr;
        const Buffer* index = kernel->table(table_of(t.index, DType::I32));
        const Buffer* weight = kernel->table(table_of(t.weight, DType::F32));
        const Buffer* outside = kernel->table(table_of(t.outside, DType::I32));
        const Buffer* y = kernel->buffer(count);
        const PushAxis p{uint32_t(count), uint32_t(in_len), uint32_t(t.out_len), uint32_t(inner),
                         uint32_t(t.per_output), t.outside.empty() ? 0 : 1, fill};
        kernel->add(dispatch_of("resample_axis", {src, index, weight, outside, y}, p, uint64_t(count)));
        src = y;
    }
    kernel->set_output(src);
    return kernel;
}

} // namespace

std::unique_ptr<DeviceKernel> make_interp_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                 const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    if (in.empty() || out.size() != 1 || in[0].dtype != DType::F32 || out[0].dtype != DType::F32) return nullptr;
    ResamplePlan plan;
    Shape shape;
    float fill = 0.f;
    if (!interp_plan(*l.op, in, plan, shape, fill) || plan.out_shape != out[0].shape) return nullptr;
    if (shape_numel(shape) == 0 || shape_numel(shape) >= (int64_t{1} << 31)) return nullptr;
    return steps_kernel(device, plan, shape, fill);
}

} // namespace kestrel::vulkan
