// Eltwise (float32, inputs of one shape: ncnn's product / weighted sum / max,
// ONNX's Sum / Max / Min / Mean) on the GPU (shaders/eltwise.comp): the CPU
// layer's steps (ops/elementwise/eltwise_plan.h), one dispatch per further
// input, in the CPU's order, in one submission.
#include "backend/vulkan/gpu_kernel.h"
#include "ops/elementwise/eltwise_plan.h"

namespace kestrel::vulkan {

namespace {

struct PushStep {
    int32_t op;
    uint32_t count;
    float ca, cb, divisor;
};

int shader_op(EltwisePlan::Step s)
{
    switch (s) {
    case EltwisePlan::Step::Product: return 0;
    case EltwisePlan::Step::Sum: return 1;
    case EltwisePlan::Step::Max: return 2;
    case EltwisePlan::Step::NanMax: return 3;
    case EltwisePlan::Step::NanMin: return 4;
    case EltwisePlan::Step::Mean: return 5;
    }
    return 1;
}

class EltwiseKernel final : public DeviceKernel {
public:
    EltwiseKernel(std::shared_ptr<Device> device, const EltwisePlan& plan, size_t inputs, uint32_t count)
        : device_(std::move(device))
    {
        for (size_t k = 0; k < inputs; ++k) x_.push_back(device_->buffer(size_t(count) * 4));
        y_ = device_->buffer(size_t(count) * 4);
        // acc = c0 * x0 op x1 first, then acc = acc op x_k.
        for (size_t k = std::min<size_t>(inputs, 2) - 1; k < inputs; ++k) {
            PushStep p{inputs == 1 ? 6 : shader_op(plan.step), count, k <= 1 ? plan.coeffs[0] : 1.f,
                       inputs == 1 ? 0.f : plan.coeffs[k], float(inputs)};
            // Mean sums until its last input, then divides.
            if (plan.step == EltwisePlan::Step::Mean && k + 1 < inputs) p.op = 1;
            const Buffer* a = k <= 1 ? x_[0].get() : y_.get();
            const uint8_t* bytes = reinterpret_cast<const uint8_t*>(&p);
            steps_.push_back(Dispatch{"eltwise", {a, x_[k].get(), y_.get()}, std::vector<uint8_t>(bytes, bytes + sizeof p), count});
        }
    }
    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override
    {
        for (size_t k = 0; k < in.size(); ++k) upload(in[k], *x_[k]);
        device_->run(steps_);
        download(*y_, out[0]);
    }

private:
    std::shared_ptr<Device> device_;
    std::vector<std::unique_ptr<Buffer>> x_;
    std::unique_ptr<Buffer> y_;
    std::vector<Dispatch> steps_;
};

} // namespace

std::unique_ptr<DeviceKernel> make_eltwise_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                  const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    EltwisePlan plan;
    if (in.empty() || in.size() > 64 || out.size() != 1 || out[0].dtype != DType::F32 || !eltwise_plan(*l.op, in, plan))
        return nullptr;
    for (const TensorDesc& d : in)
        if (d.dtype != DType::F32) return nullptr;
    const int64_t count = shape_numel(out[0].shape);
    if (count == 0 || count >= (int64_t{1} << 32) || count != shape_numel(in[0].shape)) return nullptr;
    return std::make_unique<EltwiseKernel>(device, plan, in.size(), static_cast<uint32_t>(count));
}

} // namespace kestrel::vulkan
