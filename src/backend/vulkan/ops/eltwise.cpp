// Eltwise (float32: ncnn's product / weighted sum / max, ONNX's Sum / Max /
// Min / Mean) on the GPU: the CPU layer's steps (ops/elementwise/eltwise_plan.h),
// one dispatch per further input, in the CPU's order, in one submission.
// Inputs of one shape run shaders/eltwise.comp; ONNX's inputs that broadcast
// run BinaryOp's shader over the broadcast engine's plans, the output being
// the accumulator, Mean dividing at the end.
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

// Same-shape inputs: acc = c0 * x0 op x1 first, then acc = acc op x_k.
std::unique_ptr<DeviceKernel> same_shape_kernel(const std::shared_ptr<Device>& device, const EltwisePlan& plan,
                                                size_t inputs, uint32_t count)
{
    auto kernel = std::make_unique<StepsKernel>(device);
    std::vector<const Buffer*> x;
    for (size_t k = 0; k < inputs; ++k) x.push_back(kernel->input(k, count));
    const Buffer* y = kernel->buffer(count);
    for (size_t k = std::min<size_t>(inputs, 2) - 1; k < inputs; ++k) {
        PushStep p{inputs == 1 ? 6 : shader_op(plan.step), count, k <= 1 ? plan.coeffs[0] : 1.f,
                   inputs == 1 ? 0.f : plan.coeffs[k], float(inputs)};
        // Mean sums until its last input, then divides.
        if (plan.step == EltwisePlan::Step::Mean && k + 1 < inputs) p.op = 1;
        kernel->add(dispatch_of("eltwise", {k <= 1 ? x[0] : y, x[k], y}, p, count));
    }
    kernel->set_output(y);
    return kernel;
}

// Shape s lifted to `rank` axes (numpy's alignment).
Shape lifted(const Shape& s, size_t rank)
{
    Shape r(rank - s.size(), 1);
    r.insert(r.end(), s.begin(), s.end());
    return r;
}

// ONNX's forms over inputs that broadcast: acc = x0 op x1, acc = acc op x_k, Mean's acc / n.
std::unique_ptr<DeviceKernel> broadcasting_kernel(const std::shared_ptr<Device>& device, const EltwisePlan& plan,
                                                  const std::vector<TensorDesc>& in, const Shape& os)
{
    using Step = EltwisePlan::Step;
    if (in.size() < 2 || (plan.step != Step::Sum && plan.step != Step::NanMax && plan.step != Step::NanMin &&
                          plan.step != Step::Mean))
        return nullptr;
    const int op = plan.step == Step::NanMax ? 19 : plan.step == Step::NanMin ? 20 : 0; // Add for Sum and Mean
    auto kernel = std::make_unique<StepsKernel>(device);
    const Buffer* y = kernel->buffer(shape_numel(os));
    for (size_t k = 1; k < in.size(); ++k) {
        const Shape first = k == 1 ? in[0].shape : os;
        const BroadcastPlan p = make_broadcast_plan(os, {lifted(first, os.size()), lifted(in[k].shape, os.size())},
                                                    {first, in[k].shape});
        const Buffer* a = k == 1 ? kernel->input(0, shape_numel(in[0].shape)) : y;
        Dispatch d;
        if (!binary_dispatch(op, p, a, kernel->input(k, shape_numel(in[k].shape)), y, d)) return nullptr;
        kernel->add(std::move(d));
    }
    if (plan.step == Step::Mean) {
        Tensor n({1}, DType::F32);
        n.data<float>()[0] = static_cast<float>(in.size());
        const BroadcastPlan p = make_broadcast_plan(os, {os, Shape(os.size(), 1)}, {os, Shape{1}});
        Dispatch d;
        if (!binary_dispatch(3, p, y, kernel->constant(n), y, d)) return nullptr; // Div
        kernel->add(std::move(d));
    }
    kernel->set_output(y);
    return kernel;
}

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
    if (count == 0 || count >= (int64_t{1} << 32)) return nullptr;
    for (const TensorDesc& d : in)
        if (d.shape != out[0].shape) return broadcasting_kernel(device, plan, in, out[0].shape);
    return same_shape_kernel(device, plan, in.size(), static_cast<uint32_t>(count));
}

} // namespace kestrel::vulkan
