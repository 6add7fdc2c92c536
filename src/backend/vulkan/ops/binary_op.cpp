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

class BinaryOpKernel final : public DeviceKernel {
public:
    BinaryOpKernel(std::shared_ptr<Device> device, const PushPlan& plan, int64_t a_numel, int64_t b_numel,
                   const float* scalar)
        : device_(std::move(device)), plan_(plan), a_(device_->buffer(a_numel * 4)),
          b_(device_->buffer(scalar ? 4 : b_numel * 4)), y_(device_->buffer(int64_t{plan.numel} * 4)),
          has_scalar_(scalar != nullptr)
    {
        if (scalar) std::memcpy(b_->data(), scalar, 4);
    }
    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override
    {
        upload(in[0], *a_);
        if (!has_scalar_) upload(in[1], *b_);
        device_->dispatch_items("binary_op", {a_.get(), b_.get(), y_.get()}, &plan_, sizeof plan_, plan_.numel);
        download(*y_, out[0]);
    }

private:
    std::shared_ptr<Device> device_;
    PushPlan plan_;
    std::unique_ptr<Buffer> a_, b_, y_;
    bool has_scalar_;
};

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
    if (plan.rank() > kMaxRank || plan.numel >= (int64_t{1} << 32)) return nullptr;
    PushPlan push{};
    push.op = op;
    push.rank = static_cast<uint32_t>(plan.rank());
    push.numel = static_cast<uint32_t>(plan.numel);
    for (int k = 0; k < plan.rank(); ++k) {
        push.dims[k] = static_cast<uint32_t>(plan.dims[k]);
        push.stride_a[k] = static_cast<uint32_t>(plan.strides[0][k]);
        push.stride_b[k] = static_cast<uint32_t>(plan.strides[1][k]);
    }
    const float b = p.get_float(2, 0.f);
    return std::make_unique<BinaryOpKernel>(device, push, plan.in_numel(0), scalar ? 1 : plan.in_numel(1),
                                            scalar ? &b : nullptr);
}

} // namespace kestrel::vulkan
