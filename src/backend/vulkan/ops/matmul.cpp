// MatMul (float32) on the GPU: the CPU layer's batches
// (ops/matmul/matmul_plan.h) on the batched strided product (matmul.h). When
// each operand's matrix follows the output batch at a fixed stride (equal
// batch axes, or one operand's all broadcast) one dispatch runs every batch;
// other broadcasts run one dispatch per batch at its matrices' offsets.
#include "backend/vulkan/gpu_kernel.h"
#include "backend/vulkan/ops/matmul.h"
#include "ops/matmul/matmul_plan.h"

namespace kestrel::vulkan {

namespace {

constexpr int64_t kMostDispatches = 1024; // batches broadcast unevenly, one dispatch each

// The stride s with index[i] == i * s for every batch i, or -1.
int64_t even_stride(const std::vector<int64_t>& index)
{
    const int64_t s = index.size() > 1 ? index[1] - index[0] : 0;
    for (size_t i = 0; i < index.size(); ++i)
        if (index[i] != int64_t(i) * s) return -1;
    return s;
}

} // namespace

std::unique_ptr<DeviceKernel> make_matmul_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                 const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    if (in.size() != 2 || out.size() != 1 || in[0].dtype != DType::F32 || in[1].dtype != DType::F32) return nullptr;
    MatMulPlan p;
    if (!matmul_plan(*l.op, in, p) || p.K > kMaxLoopIterations || p.batches < 1) return nullptr;
    for (int64_t v : {shape_numel(in[0].shape), shape_numel(in[1].shape), shape_numel(p.out)})
        if (v >= (int64_t{1} << 31)) return nullptr;
    const int64_t sa = even_stride(p.a_batch), sb = even_stride(p.b_batch);
    if ((sa < 0 || sb < 0) && p.batches > kMostDispatches) return nullptr;
    auto kernel = std::make_unique<StepsKernel>(device);
    const Buffer* a = kernel->input(0, shape_numel(in[0].shape));
    const Buffer* b = kernel->input(1, shape_numel(in[1].shape));
    const Buffer* y = kernel->buffer(shape_numel(p.out));
    kernel->set_output(y);
    const int64_t M = p.M, N = p.N, K = p.K;
    // B is (K, N) row-major, or (N, K) with transB (a vector B is one column).
    const Strides as{M * K, K, 1}, bs = p.transB ? Strides{K * N, 1, K} : Strides{K * N, N, 1}, ys{M * N, N, 1};
    if (sa >= 0 && sb >= 0) {
        kernel->add(matmul(a, {sa * as.batch, as.row, as.col}, b, {sb * bs.batch, bs.row, bs.col}, nullptr, {}, y, ys,
                           p.batches, M, N, K));
        return kernel;
    }
    for (int64_t i = 0; i < p.batches; ++i)
        kernel->add(matmul(a, {0, as.row, as.col, p.a_batch[size_t(i)] * as.batch}, b,
                           {0, bs.row, bs.col, p.b_batch[size_t(i)] * bs.batch}, nullptr, {}, y,
                           {0, ys.row, ys.col, i * ys.batch}, 1, M, N, K));
    return kernel;
}

} // namespace kestrel::vulkan
