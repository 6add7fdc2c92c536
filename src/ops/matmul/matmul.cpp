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
#include <algorithm>
#include <vector>

#include "kernels/dot.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

constexpr int64_t kRowBlock = 8;
constexpr int64_t kColumnChunk = 256;

// The product as batches of (M x K) . (K x N), with per-batch operand offsets.
struct Plan {
    int64_t M = 1, N = 1, K = 1;
    int64_t batches = 1;
    std::vector<int64_t> a_batch, b_batch; // per output batch: which A / B matrix (broadcast)
    bool transB = false;                   // B stored (N, K)
    Shape out;
};

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
        expect_f32(in[0], "A");
        expect_f32(in[1], "B");
        out[0] = TensorDesc();
        out[0].shape = plan(in[0].shape, in[1].shape).out;
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&) const override
    {
        const Plan p = plan(in[0].shape, in[1].shape);
        return p.batches * p.M * p.N * p.K;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Plan p = plan(in[0].shape(), in[1].shape());
        const float* A = in[0].data<float>();
        const float* B = in[1].data<float>();
        float* Y = out[0].data<float>();
        const int64_t M = p.M, N = p.N, K = p.K;
        const int64_t chunks = (N + kColumnChunk - 1) / kColumnChunk;
        const int64_t row_blocks = (M + kRowBlock - 1) / kRowBlock;
        const int64_t batches = p.batches;
        // A work item is up to kRowBlock rows x kColumnChunk columns of one batch.
        ctx.parallel_for(batches * row_blocks * chunks, [&](int64_t begin, int64_t end) {
            std::vector<float> acc(static_cast<size_t>(kRowBlock * kColumnChunk));
            for (int64_t item = begin; item < end; ++item) {
                const int64_t batch = item / (row_blocks * chunks);
                const int64_t i0 = item / chunks % row_blocks * kRowBlock, rows = std::min(kRowBlock, M - i0);
                const int64_t j0 = item % chunks * kColumnChunk, len = std::min(kColumnChunk, N - j0);
                const float* a = A + p.a_batch[batch] * M * K + i0 * K;
                const float* b = B + p.b_batch[batch] * K * N;
                std::fill(acc.begin(), acc.end(), 0.f);
                if (p.transB) { // b is (N, K): dot products
                    for (int64_t r = 0; r < rows; ++r)
                        for (int64_t j = 0; j < len; ++j) {
                            acc[r * kColumnChunk + j] = dot_f32(a + r * K, b + (j0 + j) * K, K);
                        }
                } else { // b is (K, N): row updates, each B segment shared by the row block
                    for (int64_t k = 0; k < K; ++k) {
                        const float* bk = b + k * N + j0;
                        for (int64_t r = 0; r < rows; ++r) {
                            const float ak = a[r * K + k];
                            float* ar = acc.data() + r * kColumnChunk;
                            for (int64_t j = 0; j < len; ++j) ar[j] += ak * bk[j];
                        }
                    }
                }
                for (int64_t r = 0; r < rows; ++r)
                    std::copy(acc.begin() + r * kColumnChunk, acc.begin() + r * kColumnChunk + len,
                              Y + batch * M * N + (i0 + r) * N + j0);
            }
        });
    }

private:
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

std::unique_ptr<Op> make_matmul() { return std::make_unique<MatMul>(); }

} // namespace kestrel
