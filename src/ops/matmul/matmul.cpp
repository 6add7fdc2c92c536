// MatMul (ncnn param 0=transB): numpy-style matmul of two inputs of any rank.
//   1-D . 1-D      -> [1] (dot product; ncnn's shape, numpy's is a scalar)
//   2-D . 2-D      -> (M, N)
//   1-D . N-D      -> (batch..., N)  (the vector is one row)
//   N-D . 1-D      -> (batch..., M)  (the vector is one column; transB ignored)
//   otherwise      -> (batch..., M, N): the axes before the last two are batch
//                     axes, aligned from the right and broadcast as numpy does
//                     (sizes must match or be 1; a missing axis counts as 1).
// For ranks up to 4 these are ncnn's shapes (a rank-3 operand against a rank-4
// one is (1, c, h, w)).
// With transB the last two axes of B are (N, K) instead of (K, N).
// float32 on the GEMM kernels; int32 (ONNX's MatMul of int32, and the exact
// sums of MatMulInteger with B given at run time) by a plain loop, wrapping
// as two's complement does.
#include <algorithm>
#include <vector>

#include "kernels/gemm.h"
#include "ops/matmul/matmul_plan.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

using Plan = MatMulPlan;

class MatMul : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        const int t = pd.get_int(0, 0);
        check(t == 0 || t == 1, "transB (param 0) must be 0 or 1, got ", t);
        transB_ = t == 1;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        check((in[0].dtype == DType::F32 || in[0].dtype == DType::I32) && in[1].dtype == in[0].dtype,
              "A and B must both be float32 or both int32, got ", dtype_name(in[0].dtype), " and ",
              dtype_name(in[1].dtype));
        out[0] = TensorDesc(plan(in[0].shape, in[1].shape).out, in[0].dtype);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&) const override
    {
        const Plan p = plan(in[0].shape, in[1].shape);
        return p.batches * p.M * p.N * p.K;
    }

    // Scratch 0: every A matrix packed for the GEMM.
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        const Plan p = plan(in[0].shape, in[1].shape);
        if (in[0].dtype == DType::F32)
            ctx.request_scratch(a_matrices(in[0].shape) * gemm_packed_a_floats(gemm_kernel(), p.M, p.K) * 4);
        return nullptr;
    }

    // Every batch a GEMM (kernels/gemm.h): A packed once per matrix, B packed
    // per call (row-major, or read transposed with transB). Many batches run
    // one GEMM per thread at a time; few split each GEMM across the threads.
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Plan p = plan(in[0].shape(), in[1].shape());
        if (in[0].dtype() == DType::I32) return forward_int32(p, in[0].data<int32_t>(), in[1].data<int32_t>(),
                                                              out[0].data<int32_t>(), ctx);
        const GemmKernel& kern = gemm_kernel();
        const int64_t M = p.M, N = p.N, K = p.K, per_a = gemm_packed_a_floats(kern, M, K);
        const float* A = in[0].data<float>();
        const float* B = in[1].data<float>();
        float* Y = out[0].data<float>();
        float* packed = ctx.scratch_as<float>(0);
        ctx.parallel_for(a_matrices(in[0].shape()), [&](int64_t begin, int64_t end) {
            for (int64_t m = begin; m < end; ++m) gemm_pack_a_into(kern, A + m * M * K, M, K, K, 1, packed + m * per_a);
        });
        const auto multiply = [&](int64_t batch, const ExecContext& c) {
            const float* b = B + p.b_batch[batch] * K * N;
            float* y = Y + batch * M * N;
            const float* a = packed + p.a_batch[batch] * per_a;
            if (p.transB)
                gemm_f32(kern, M, N, K, a, GemmStart::Zero, nullptr, y, N, GemmTransposedB{b, K, K, kern.nr}, gemm_no_post, c);
            else
                gemm_f32(kern, M, N, K, a, GemmStart::Zero, nullptr, y, N, GemmRowMajorB{b, K, N, kern.nr}, gemm_no_post, c);
        };
        if (p.batches >= 2 * ctx.threads()) {
            const ExecContext serial(nullptr, 1);
            ctx.parallel_for(p.batches, [&](int64_t begin, int64_t end) {
                for (int64_t batch = begin; batch < end; ++batch) multiply(batch, serial);
            });
        } else {
            for (int64_t batch = 0; batch < p.batches; ++batch) multiply(batch, ctx);
        }
    }

private:
    // Each output row of each batch a loop over K, in uint32 (wrapping).
    static void forward_int32(const Plan& p, const int32_t* A, const int32_t* B, int32_t* Y, const ExecContext& ctx)
    {
        const int64_t M = p.M, N = p.N, K = p.K;
        ctx.parallel_for(p.batches * M, [&](int64_t begin, int64_t end) {
            for (int64_t row = begin; row < end; ++row) {
                const int64_t batch = row / M, m = row % M;
                const int32_t* a = A + (p.a_batch[static_cast<size_t>(batch)] * M + m) * K;
                const int32_t* b = B + p.b_batch[static_cast<size_t>(batch)] * K * N;
                int32_t* y = Y + row * N;
                for (int64_t j = 0; j < N; ++j) {
                    uint32_t sum = 0;
                    for (int64_t k = 0; k < K; ++k)
                        sum += static_cast<uint32_t>(a[k]) * static_cast<uint32_t>(p.transB ? b[j * K + k] : b[k * N + j]);
                    y[j] = static_cast<int32_t>(sum);
                }
            }
        });
    }

    // A's matrices (the product of its batch axes).
    static int64_t a_matrices(const Shape& a)
    {
        return a.size() <= 2 ? 1 : shape_numel(Shape(a.begin(), a.end() - 2));
    }

public:
    Plan plan(const Shape& a, const Shape& b) const
    {
        const int ra = static_cast<int>(a.size()), rb = static_cast<int>(b.size());
        check(ra >= 1 && rb >= 1, "expects inputs of rank 1 or more, got ", shape_str(a), " and ", shape_str(b));
        Plan p;
        // Matrix parts. A vector A is one row; a vector B is one column (never transposed).
        int64_t ka = 0, kb = 0;
        if (ra == 1) {
            p.M = 1;
            ka = a[0];
        } else {
            p.M = a[ra - 2];
            ka = a[ra - 1];
        }
        if (rb == 1) {
            p.N = 1;
            kb = b[0];
            p.transB = true; // one column stored contiguously == (N=1, K)
        } else {
            p.transB = transB_;
            p.N = transB_ ? b[rb - 2] : b[rb - 1];
            kb = transB_ ? b[rb - 1] : b[rb - 2];
        }
        check(ka == kb, "K of A ", shape_str(a), " (", ka, ") and of B ", shape_str(b), (transB_ ? " with transB" : ""),
              " (", kb, ") differ");
        p.K = ka;
        const Shape batch_a(a.begin(), a.end() - std::min(ra, 2)), batch_b(b.begin(), b.end() - std::min(rb, 2));
        const Shape batch = broadcast_batch(batch_a, batch_b, a, b);
        index_batches(batch, batch_a, p.a_batch);
        index_batches(batch, batch_b, p.b_batch);
        p.batches = static_cast<int64_t>(p.a_batch.size());
        p.out = batch;
        if (ra > 1) p.out.push_back(p.M);
        if (rb > 1) p.out.push_back(p.N);
        if (p.out.empty()) p.out = {1}; // ncnn's 1-D . 1-D
        return p;
    }

private:
    // numpy broadcasting of the batch axes, aligned from the right.
    static Shape broadcast_batch(const Shape& x, const Shape& y, const Shape& a, const Shape& b)
    {
        const size_t rank = std::max(x.size(), y.size());
        Shape out(rank, 1);
        for (size_t i = 0; i < rank; ++i) {
            const int64_t dx = i < rank - x.size() ? 1 : x[i - (rank - x.size())];
            const int64_t dy = i < rank - y.size() ? 1 : y[i - (rank - y.size())];
            check(dx == dy || dx == 1 || dy == 1, "batch axes of ", shape_str(a), " and ", shape_str(b), " do not broadcast");
            out[i] = dx == 1 ? dy : dx;
        }
        return out;
    }

    // For each batch of the output (row-major over `batch`), the operand's matrix
    // index: its own batch axes, right-aligned, with size-1 axes repeated.
    static void index_batches(const Shape& batch, const Shape& own, std::vector<int64_t>& index)
    {
        const int64_t count = shape_numel(batch);
        index.assign(static_cast<size_t>(count), 0);
        const size_t offset = batch.size() - own.size();
        std::vector<int64_t> strides(own.size(), 0); // 0 for broadcast axes
        int64_t stride = 1;
        for (size_t i = own.size(); i-- > 0;) {
            strides[i] = own[i] == 1 ? 0 : stride;
            stride *= own[i];
        }
        for (int64_t flat = 0; flat < count; ++flat) {
            int64_t rest = flat, at = 0;
            for (size_t i = batch.size(); i-- > offset;) {
                at += rest % batch[i] * strides[i - offset];
                rest /= batch[i];
            }
            index[static_cast<size_t>(flat)] = at;
        }
    }

    bool transB_ = false;
};

} // namespace

bool matmul_plan(const Op& op, const std::vector<TensorDesc>& in, MatMulPlan& plan)
{
    const auto* matmul = dynamic_cast<const MatMul*>(&op);
    if (matmul == nullptr || in.size() != 2) return false;
    plan = matmul->plan(in[0].shape, in[1].shape);
    return true;
}

std::unique_ptr<Op> make_matmul() { return std::make_unique<MatMul>(); }

} // namespace kestrel
