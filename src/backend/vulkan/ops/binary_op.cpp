// BinaryOp on the GPU: the CPU's broadcast policies (kernels/broadcast.h)
// make the plan, whatever the rule (ncnn's, numpy's, unidirectional), and the
// shader walks it (shaders/binary_op.comp). float32 only; other dtypes, and
// plans past the shader's 8 merged axes or 2^32 elements, stay on the CPU.
#include <cstring>

#include "backend/vulkan/gpu_kernel.h"
#include "kernels/broadcast.h"

namespace kestrel::vulkan {

namespace {

constexpr int kMaxRank = 8;

struct PushPlan {
    int32_t op;
    uint32_t rank, numel, unused;
    uint32_t dims[kMaxRank], stride_a[kMaxRank], stride_b[kMaxRank];
};
static_assert(sizeof(PushPlan) == 112, "push constants stay within Vulkan's guaranteed 128 bytes");

// The shader's op code for BinaryOp's (ncnn's table as it is; ONNX's typed
// table where float32 has a counterpart), or -1.
int shader_op(const ParamDict& p)
{
    const int op = p.get_int(0, 0);
    if (p.get_int(21, 0) != 1) return op >= 0 && op <= 18 ? op : -1;
    switch (op) {
    case 0: case 1: case 2: case 3: return op; // Add Sub Mul Div
    case 4: return 6;                          // Pow
    case 5: return 22;                         // Mod (Python's)
    case 6: return 12;                         // Fmod
    case 7: return 19;                         // Max
    case 8: return 20;                         // Min
    case 22: return 21;                        // PRelu
    default: return -1;
    }
}

// The push constants of `plan` (two inputs) for shader op `op`; false past the shader's axes or 2^32 elements.
bool push_of(int op, const BroadcastPlan& plan, PushPlan& push)
{
    if (plan.rank() > kMaxRank || plan.numel >= (int64_t{1} << 32)) return false;
    push = PushPlan{};
    push.op = op;
    push.rank = static_cast<uint32_t>(plan.rank());
    push.numel = static_cast<uint32_t>(plan.numel);
    for (int k = 0; k < plan.rank(); ++k) {
        push.dims[k] = static_cast<uint32_t>(plan.dims[k]);
        push.stride_a[k] = static_cast<uint32_t>(plan.strides[0][k]);
        push.stride_b[k] = static_cast<uint32_t>(plan.strides[1][k]);
    }
    return true;
}

} // namespace

std::unique_ptr<DeviceKernel> make_binary_op_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                    const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    const ParamDict& p = l.params;
    const int op = shader_op(p);
    const bool scalar = p.get_int(21, 0) != 1 && p.get_int(1, 0) != 0;
    if (op < 0 || out.size() != 1 || out[0].dtype != DType::F32) return nullptr;
    for (const TensorDesc& d : in)
        if (d.dtype != DType::F32) return nullptr;
    if (in.size() != (scalar ? 1u : 2u)) return nullptr;
    const int rule = p.get_int(20, p.get_int(21, 0) == 1 ? 1 : 0);
    const BroadcastPlan plan = scalar ? broadcast_numpy(in[0].shape, Shape{})
                                      : broadcast_plan(static_cast<BroadcastRule>(rule), in[0].shape, in[1].shape);
    auto kernel = std::make_unique<StepsKernel>(device);
    const Buffer* a = kernel->input(0, plan.in_numel(0));
    Tensor b_value({1}, DType::F32);
    b_value.data<float>()[0] = p.get_float(2, 0.f);
    const Buffer* b = scalar ? kernel->constant(b_value) : kernel->input(1, plan.in_numel(1));
    const Buffer* y = kernel->buffer(plan.numel);
    Dispatch d;
    if (!binary_dispatch(op, plan, a, b, y, d)) return nullptr;
    kernel->add(std::move(d));
    kernel->set_output(y);
    return kernel;
}

bool binary_dispatch(int op, const BroadcastPlan& plan, const Buffer* a, const Buffer* b, const Buffer* y, Dispatch& d)
{
    PushPlan push;
    if (!push_of(op, plan, push)) return false;
    d = dispatch_of("binary_op", {a, b, y}, push, uint64_t(plan.numel));
    return true;
}

} // namespace kestrel::vulkan
