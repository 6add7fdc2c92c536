// Reduction (float32; ncnn's form and ONNX's Reduce*) on the GPU
// (shaders/reduce.comp), one group per invocation over the axes the CPU
// layer resolves (ops/reduce/reduction_plan.h). Neighbouring axes that are
// both kept or both reduced are merged; at most 6 of each remain.
#include "backend/vulkan/gpu_kernel.h"
#include "ops/reduce/reduction_plan.h"

namespace kestrel::vulkan {

namespace {

constexpr int kMaxAxes = 6;

struct PushFold {
    uint32_t groups, group_size;
    int32_t op, ncnn, kept_rank, reduced_rank;
    uint32_t kept_dims[kMaxAxes], kept_strides[kMaxAxes], reduced_dims[kMaxAxes], reduced_strides[kMaxAxes];
    float coeff;
};
static_assert(sizeof(PushFold) <= 128, "push constants stay within Vulkan's guaranteed 128 bytes");

// Appends axis k (dim, stride) to one side, merged into that side's last
// axis when it is axis k - 1 of the input.
bool add_axis(uint32_t* dims, uint32_t* strides, int32_t& rank, bool continues, int64_t dim, int64_t stride)
{
    if (continues && rank > 0) {
        dims[rank - 1] *= static_cast<uint32_t>(dim);
        strides[rank - 1] = static_cast<uint32_t>(stride);
        return true;
    }
    if (rank == kMaxAxes) return false;
    dims[rank] = static_cast<uint32_t>(dim), strides[rank] = static_cast<uint32_t>(stride);
    ++rank;
    return true;
}

} // namespace

std::unique_ptr<DeviceKernel> make_reduction_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                    const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    if (in.empty() || out.size() != 1 || in[0].dtype != DType::F32 || out[0].dtype != DType::F32) return nullptr;
    ReductionPlan plan;
    if (!reduction_plan(*l.op, in, plan)) return nullptr;
    const Shape& s = in[0].shape;
    const int64_t numel = shape_numel(s);
    if (numel == 0 || numel >= (int64_t{1} << 31)) return nullptr;
    PushFold p{};
    p.op = plan.passthrough ? 0 : plan.op;
    p.ncnn = plan.ncnn ? 1 : 0;
    p.coeff = plan.coeff;
    p.groups = p.group_size = 1;
    const std::vector<int64_t> strides = [&] {
        std::vector<int64_t> v(s.size(), 1);
        for (size_t k = s.size(); k-- > 1;) v[k - 1] = v[k] * s[k];
        return v;
    }();
    int previous = -1; // the side of the last axis added: 0 kept, 1 reduced (axes of size 1 add nothing)
    for (size_t k = 0; k < s.size(); ++k) {
        if (s[k] == 1) continue;
        const bool reduced = plan.reduced[k] && !plan.passthrough;
        const bool continues = previous == int(reduced);
        previous = int(reduced);
        if (reduced) {
            p.group_size *= static_cast<uint32_t>(s[k]);
            if (!add_axis(p.reduced_dims, p.reduced_strides, p.reduced_rank, continues, s[k], strides[k])) return nullptr;
        } else {
            p.groups *= static_cast<uint32_t>(s[k]);
            if (!add_axis(p.kept_dims, p.kept_strides, p.kept_rank, continues, s[k], strides[k])) return nullptr;
        }
    }
    if (int64_t{p.groups} != shape_numel(out[0].shape) || int64_t{p.group_size} > kMaxLoopIterations) return nullptr;
    return std::make_unique<MapKernel<PushFold>>(device, "reduce", p, numel, int64_t{p.groups}, uint64_t{p.groups}, 64);
}

} // namespace kestrel::vulkan
