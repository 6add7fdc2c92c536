// MatMul (ncnn param 0=transB): numpy-style matmul of two inputs of rank 1-4.
//   1-D . 1-D      -> [1] (dot product)
//   2-D . 2-D      -> (M, N)
//   1-D . 2-D      -> (N)          (the vector is one row)
//   2-D . 1-D      -> (M)          (the vector is one column; transB ignored)
//   1-D . 3-D/4-D  -> (c, N) / (c, d, N)
//   3-D/4-D . 1-D  -> (c, M) / (c, d, M)
//   otherwise      -> batch axes broadcast: a rank-2 operand is one matrix,
//                     a rank-3 operand is (1, c, h, w) against a rank-4 one;
//                     batch sizes must match or be 1.
// With transB the last two axes of B are (N, K) instead of (K, N).
#include <algorithm>

#include "ops/builtin_ops.h"
#include "ops/op_util.h"

namespace kestrel {

namespace {

constexpr int64_t kRowBlock = 8;
constexpr int64_t kColumnChunk = 256;

// The product as batches of (M x K) . (K x N), with per-batch offsets.
struct Plan {
    int64_t M = 1, N = 1, K = 1;
    int64_t bc = 1, bd = 1;              // output batch axes (outer, inner)
    int64_t a_c = 1, a_d = 1, b_c = 1, b_d = 1; // operand batch sizes (1 = broadcast)
    bool transB = false;                 // B stored (N, K)
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
        return p.bc * p.bd * p.M * p.N * p.K;
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
        const int64_t batches = p.bc * p.bd;
        // A work item is up to kRowBlock rows x kColumnChunk columns of one batch.
        ctx.parallel_for(batches * row_blocks * chunks, [&](int64_t begin, int64_t end) {
            std::vector<float> acc(static_cast<size_t>(kRowBlock * kColumnChunk));
            for (int64_t item = begin; item < end; ++item) {
                const int64_t batch = item / (row_blocks * chunks);
                const int64_t i0 = item / chunks % row_blocks * kRowBlock, rows = std::min(kRowBlock, M - i0);
                const int64_t j0 = item % chunks * kColumnChunk, len = std::min(kColumnChunk, N - j0);
                const int64_t c = batch / p.bd, d = batch % p.bd;
                const int64_t ab = (p.a_c == 1 ? 0 : c) * p.a_d + (p.a_d == 1 ? 0 : d);
                const int64_t bb = (p.b_c == 1 ? 0 : c) * p.b_d + (p.b_d == 1 ? 0 : d);
                const float* a = A + ab * M * K + i0 * K;
                const float* b = B + bb * K * N;
                std::fill(acc.begin(), acc.end(), 0.f);
                if (p.transB) { // b is (N, K): dot products
                    for (int64_t r = 0; r < rows; ++r)
                        for (int64_t j = 0; j < len; ++j) {
                            const float* ar = a + r * K;
                            const float* bj = b + (j0 + j) * K;
                            float s = 0.f;
                            for (int64_t k = 0; k < K; ++k) s += ar[k] * bj[k];
                            acc[r * kColumnChunk + j] = s;
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
        check(ra >= 1 && ra <= 4 && rb >= 1 && rb <= 4, "expects inputs of rank 1-4, got ", shape_str(a), " and ",
              shape_str(b));
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
        // Batch axes as (c, d): rank 3 is (c) alone unless the other side is rank 4.
        const int maxr = std::max(ra, rb);
        auto batch_of = [&](const Shape& s, int r, int64_t& c, int64_t& d) {
            c = d = 1;
            if (r == 3 && maxr == 4) d = s[0];
            else if (r == 3) c = s[0];
            else if (r == 4) {
                c = s[0];
                d = s[1];
            }
        };
        batch_of(a, ra, p.a_c, p.a_d);
        batch_of(b, rb, p.b_c, p.b_d);
        auto join = [&](int64_t x, int64_t y) {
            check(x == y || x == 1 || y == 1, "batch axes of ", shape_str(a), " and ", shape_str(b), " do not broadcast");
            return std::max(x, y);
        };
        p.bc = join(p.a_c, p.b_c);
        p.bd = join(p.a_d, p.b_d);
        // Output shape (ncnn's per-case shapes).
        if (ra == 1 && rb == 1) p.out = {1};
        else if (ra == 2 && rb == 2) p.out = {p.M, p.N};
        else if (ra == 1 && rb == 2) p.out = {p.N};
        else if (ra == 2 && rb == 1) p.out = {p.M};
        else if (ra == 1) p.out = rb == 3 ? Shape{p.bc, p.N} : Shape{p.bc, p.bd, p.N};
        else if (rb == 1) p.out = ra == 3 ? Shape{p.bc, p.M} : Shape{p.bc, p.bd, p.M};
        else if (maxr == 3) p.out = {p.bc, p.M, p.N};
        else p.out = {p.bc, p.bd, p.M, p.N};
        return p;
    }

    bool transB_ = false;
};

} // namespace

std::unique_ptr<Op> make_matmul() { return std::make_unique<MatMul>(); }

} // namespace kestrel
