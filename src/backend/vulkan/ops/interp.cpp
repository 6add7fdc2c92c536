// Interp (float32; ncnn's form and ONNX's Resize: nearest, bilinear, bicubic,
// every coordinate rule) on the GPU: the tap tables the CPU layer makes
// (ops/resample/interp_plan.h) applied axis by axis
// (shaders/resample_axis.comp), the steps in one submission. A resize that
// keeps every axis is one identity step.
#include <cstring>

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

class InterpKernel final : public GpuKernel {
public:
    explicit InterpKernel(std::shared_ptr<Device> device) : device_(std::move(device)) {}

    // Buffers for each step's tables and output; false past 32-bit sizes.
    bool build(const ResamplePlan& plan, Shape shape, float fill)
    {
        x_ = device_->buffer(size_t(shape_numel(shape)) * 4);
        const Buffer* src = x_.get();
        std::vector<AxisTaps> steps = plan.steps;
        if (steps.empty()) steps.push_back(identity_taps(shape[0]));
        for (const AxisTaps& t : steps) {
            const int64_t in_len = shape[t.axis], inner = nd_inner(shape, t.axis);
            shape[t.axis] = t.out_len;
            const int64_t count = shape_numel(shape);
            if (count >= (int64_t{1} << 31) || int64_t(t.index.size()) >= (int64_t{1} << 31)) return false;
            std::vector<int32_t> index(t.index.begin(), t.index.end()), outside(t.outside.begin(), t.outside.end());
            tables_.push_back(buffer_of(index.data(), index.size()));
            const Buffer* index_buffer = tables_.back().get();
            tables_.push_back(buffer_of(t.weight.data(), t.weight.size()));
            const Buffer* weight_buffer = tables_.back().get();
            tables_.push_back(buffer_of(outside.data(), outside.size()));
            const Buffer* outside_buffer = tables_.back().get();
            outputs_.push_back(device_->buffer(size_t(count) * 4));
            const PushAxis p{uint32_t(count), uint32_t(in_len), uint32_t(t.out_len), uint32_t(inner),
                             uint32_t(t.per_output), outside.empty() ? 0 : 1, fill};
            const uint8_t* bytes = reinterpret_cast<const uint8_t*>(&p);
            steps_.push_back(Dispatch{"resample_axis",
                                      {src, index_buffer, weight_buffer, outside_buffer, outputs_.back().get()},
                                      std::vector<uint8_t>(bytes, bytes + sizeof p), uint64_t(count)});
            src = outputs_.back().get();
        }
        return true;
    }

    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override
    {
        upload(in[0], *x_);
        last_ms_ = device_->run(steps_);
        download(*outputs_.back(), out[0]);
    }

private:
    static int64_t nd_inner(const Shape& s, size_t axis)
    {
        int64_t inner = 1;
        for (size_t k = axis + 1; k < s.size(); ++k) inner *= s[k];
        return inner;
    }
    template <class T> std::unique_ptr<Buffer> buffer_of(const T* data, size_t n)
    {
        auto b = device_->buffer(std::max<size_t>(n, 1) * 4);
        if (n) std::memcpy(b->data(), data, n * 4);
        return b;
    }

    std::shared_ptr<Device> device_;
    std::unique_ptr<Buffer> x_;
    std::vector<std::unique_ptr<Buffer>> tables_, outputs_;
    std::vector<Dispatch> steps_;
};

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
    auto kernel = std::make_unique<InterpKernel>(device);
    return kernel->build(plan, shape, fill) ? std::move(kernel) : nullptr;
}

} // namespace kestrel::vulkan
