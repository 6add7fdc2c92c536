// Gemm (ncnn params): y = alpha * (op(A) op(B) + beta * C).
//   0=alpha (1) 1=beta (1) 2=transA 3=transB 4=constantA 5=constantB
//   6=constantC 7=M 8=N 9=K 10=constant_broadcast_type_C (0; -1 = no C)
//   11=output_N1M 14=output_transpose 18=quantize_term (int8: refused)
//   12=output_elempack, 13=output_elemtype, 20-22=tile sizes: ignored (the
//   output is always plain fp32).
// Weights, all tagged (ncnn "type 0"), in this order when constant:
//   A [M][K] ([K][M] with transA), B [K][N] ([N][K] with transB), C by type:
//   0 [1], 1 [M], 2 [M][1], 3 [M][N], 4 [1][N].
// Runtime operands come as inputs in the order A, B, C (C optional when not
// constant; its broadcast type follows from its shape as in ncnn, and a shape
// that fits none is an error; a scalar C is taken as [1]). An operand is 2-D (h, w), 1-D (one row), or
// 3-D (c, 1, w) seen as (c, w), as ncnn's N1M form. The output is (M, N),
// (N, M) with output_transpose, or 3-D (M, 1, N) / (N, 1, M) with output_N1M.
#include <algorithm>
#include <tuple>

#include "kernels/bf16_gemm.h"
#include "kernels/gemm.h"
#include "ops/common/packed_weights.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

struct MatShape {
    int64_t rows = 0, cols = 0;
};

MatShape as_matrix(const Shape& s, const char* what)
{
    if (s.size() == 1) return {1, s[0]};
    if (s.size() == 2) return {s[0], s[1]};
    if (s.size() == 3 && s[1] == 1) return {s[0], s[2]};
    fail(what, " must be 1-D, 2-D or 3-D (c, 1, w), got ", shape_str(s));
}

int flag_param(const ParamDict& pd, int id, const char* what)
{
    const int v = pd.get_int(id, 0);
    check(v == 0 || v == 1, what, " (param ", id, ") must be 0 or 1, got ", v);
    return v;
}

class Gemm : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        alpha_ = pd.get_float(0, 1.f);
        beta_ = pd.get_float(1, 1.f);
        transA_ = flag_param(pd, 2, "transA");
        transB_ = flag_param(pd, 3, "transB");
        constantA_ = flag_param(pd, 4, "constantA");
        constantB_ = flag_param(pd, 5, "constantB");
        constantC_ = flag_param(pd, 6, "constantC");
        M_ = pd.get_int(7, 0);
        N_ = pd.get_int(8, 0);
        K_ = pd.get_int(9, 0);
        typeC_ = pd.get_int(10, 0);
        output_N1M_ = flag_param(pd, 11, "output_N1M");
        output_transpose_ = flag_param(pd, 14, "output_transpose");
        const int quantize_term = pd.get_int(18, 0);
        check(quantize_term == 0, "quantize_term (param 18) ", quantize_term,
              " (int8 / weight-quantized Gemm) is not supported");
        check(M_ >= 0 && N_ >= 0 && K_ >= 0, "M, N, K (params 7, 8, 9) must be >= 0, got ", M_, ", ", N_, ", ", K_);
        if (constantA_) check(M_ > 0 && K_ > 0, "constantA (param 4) needs M (param 7) and K (param 9) > 0");
        if (constantB_) check(N_ > 0 && K_ > 0, "constantB (param 5) needs N (param 8) and K (param 9) > 0");
        if (constantC_) {
            check(typeC_ >= -1 && typeC_ <= 4, "constant_broadcast_type_C (param 10) must be -1..4, got ", typeC_);
            if (typeC_ >= 1 && typeC_ <= 3) check(M_ > 0, "constant C of broadcast type ", typeC_, " needs M (param 7) > 0");
            if (typeC_ >= 3) check(N_ > 0, "constant C of broadcast type ", typeC_, " needs N (param 8) > 0");
        }
    }

    void load_model(WeightReader& wr) override
    {
        B_bf16_.reset();
        if (constantA_) {
            // Packed once for the GEMM's kernel; only the packed copy is kept.
            const Tensor a = f32_weight(wr.load(int64_t(M_) * K_, WeightEncoding::Tagged), "A");
            A_packed_ = gemm_pack_a(gemm_kernel(), a.data<float>(), M_, K_, transA_ ? 1 : K_, transA_ ? M_ : 1);
        }
        if (constantB_) {
            const Tensor b = f32_weight(wr.load(int64_t(N_) * K_, WeightEncoding::Tagged), "B");
            // Packed once into the GEMM's B panels; only the packed copy is kept.
            const GemmKernel& kern = gemm_kernel();
            B_packed_ = transB_ ? gemm_pack_b(kern, N_, K_, GemmTransposedB{b.data<float>(), K_, K_, kern.nr})
                                : gemm_pack_b(kern, N_, K_, GemmRowMajorB{b.data<float>(), K_, N_, kern.nr});
        }
        if (constantC_ && typeC_ != -1) {
            const int64_t sizes[5] = {1, M_, M_, int64_t(M_) * N_, N_};
            C_ = f32_weight(wr.load(sizes[typeC_], WeightEncoding::Tagged), "C");
        }
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const size_t needed = size_t(!constantA_) + size_t(!constantB_);
        expect_input_count(in, needed, needed + (constantC_ ? 0 : 1));
        expect_output_count(out, 1);
        for (const auto& d : in) expect_f32(d);
        const Dims g = dims(in);
        const int64_t outer = output_transpose_ ? g.N : g.M, inner = output_transpose_ ? g.M : g.N;
        out[0] = TensorDesc();
        out[0].shape = output_N1M_ ? Shape{outer, 1, inner} : Shape{outer, inner};
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&) const override
    {
        const Dims g = dims(in);
        return g.M * g.N * g.K;
    }

    int64_t weight_bytes() const override
    {
        int64_t n = 0;
        if (C_.defined()) n += static_cast<int64_t>(C_.nbytes());
        return n + static_cast<int64_t>((A_packed_.size() + B_packed_.size()) * sizeof(float) +
                                        B_bf16_.floats() * sizeof(uint16_t));
    }

    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        auto st = std::make_unique<GemmState>();
        st->g = dims(in);
        const int64_t M = st->g.M, N = st->g.N, K = st->g.K, floats = 4;
        if (output_transpose_) st->untransposed = ctx.request_scratch(M * N * floats);
        if (ctx.bf16() && constantB_ && !constantA_ && !transA_) {
            // bfloat16 (PrepareContext::bf16): a copy of B built by the first such prepare.
            const Bf16GemmKernel& kern = bf16_gemm_kernel();
            st->b_bf16 = B_bf16_.get(
                [&] { return bf16_gemm_pack_b_from_float_panels(kern, B_packed_.data(), K_, N_, gemm_kernel().nr); });
            st->a_packed = ctx.request_scratch(bf16_gemm_packed_a_values(kern, M, K) * 2);
            return st;
        }
        if (!constantA_) st->a_packed = ctx.request_scratch(gemm_packed_a_floats(gemm_kernel(), M, K) * floats);
        return st;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const GemmState& st = ctx.state_as<GemmState>();
        const int64_t M = st.g.M, N = st.g.N, K = st.g.K;
        size_t next = 0;
        const GemmKernel& kern = gemm_kernel();
        const float* a_packed = A_packed_.data();
        float* y = output_transpose_ ? ctx.scratch_as<float>(st.untransposed) : out[0].data<float>();
        if (st.b_bf16) {
            // y = A B, then (y + beta * C) * alpha.
            bf16_gemm_rows(bf16_gemm_kernel(), M, N, K, in[0].data<float>(), K, st.b_bf16, y,
                           ctx.scratch_as<uint16_t>(st.a_packed), ctx);
            const float* C = constantC_ ? (typeC_ == -1 ? nullptr : C_.data<float>())
                                        : (in.size() > 1 ? in[1].data<float>() : nullptr);
            fill_beta_c(C, st.g.typeC, M, N, y, ctx, true);
            return transpose_output(y, M, N, out[0], ctx);
        }
        if (!constantA_) {
            float* packed = ctx.scratch_as<float>(st.a_packed);
            gemm_pack_a_into(kern, in[next++].data<float>(), M, K, transA_ ? 1 : K, transA_ ? M : 1, packed, ctx);
            a_packed = packed;
        }
        const float* B = constantB_ ? nullptr : in[next++].data<float>(); // [K][N], or [N][K] with transB
        const float* C = constantC_ ? (typeC_ == -1 ? nullptr : C_.data<float>())
                                    : (next < in.size() ? in[next].data<float>() : nullptr);
        // y = beta * C, then + A B (kernels/gemm.h: each sum in k order from
        // there), then * alpha: ncnn's order. A transposed output is computed
        // (M, N) first.
        fill_beta_c(C, st.g.typeC, M, N, y, ctx);
        const auto scale = [&](int64_t, float* values, int64_t count) {
            if (alpha_ != 1.f)
                for (int64_t j = 0; j < count; ++j) values[j] *= alpha_;
        };
        const auto multiply = [&](const auto& pack_b) {
            gemm_f32(kern, M, N, K, a_packed, GemmStart::C, nullptr, y, N, pack_b, scale, ctx);
        };
        if (constantB_)
            multiply(GemmPackedB{B_packed_.data(), K, kern.nr});
        else if (transB_)
            multiply(GemmTransposedB{B, K, K, kern.nr});
        else
            multiply(GemmRowMajorB{B, K, N, kern.nr});
        transpose_output(y, M, N, out[0], ctx);
    }

private:
    // A transposed output from y (M x N).
    void transpose_output(const float* y, int64_t M, int64_t N, Tensor& out, const ExecContext& ctx) const
    {
        if (!output_transpose_) return;
        float* t = out.data<float>();
        ctx.parallel_for(N, [&](int64_t begin, int64_t end) {
            for (int64_t j = begin; j < end; ++j)
                for (int64_t i = 0; i < M; ++i) t[j * M + i] = y[i * N + j];
        });
    }

    // y (M x N) = beta * C broadcast by its type (0 scalar, 1/2 per row, 3 full,
    // 4 per column), or 0 without C; onto_products: y = (y + beta * C) * alpha
    // (y holding A B). One loop per type, so that each row is a plain
    // vectorizable fill or scaled copy (a switch per value took a fifth of a
    // 145 x 3072 layer's time).
    void fill_beta_c(const float* C, int typeC, int64_t M, int64_t N, float* y, const ExecContext& ctx,
                     bool onto_products = false) const
    {
        const float beta = beta_, alpha = alpha_;
        ctx.parallel_for(M, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                float* row = y + i * N;
                if (!C) {
                    if (!onto_products) std::fill(row, row + N, 0.f);
                } else if (typeC == 3 || typeC == 4) {
                    const float* src = typeC == 3 ? C + i * N : C;
                    if (onto_products)
                        for (int64_t j = 0; j < N; ++j) row[j] += src[j] * beta;
                    else
                        for (int64_t j = 0; j < N; ++j) row[j] = src[j] * beta;
                } else {
                    const float v = (typeC == 0 ? C[0] : C[i]) * beta;
                    if (onto_products)
                        for (int64_t j = 0; j < N; ++j) row[j] += v;
                    else
                        std::fill(row, row + N, v);
                }
                if (onto_products && alpha != 1.f)
                    for (int64_t j = 0; j < N; ++j) row[j] *= alpha;
            }
        });
    }

    struct Dims {
        int64_t M = 0, N = 0, K = 0;
        int typeC = -1; // broadcast type of the C in use, -1 without C
    };

    // The sizes, and scratch (-1: not needed): A packed (unless constant: packed
    // at load), B untransposed, and the output before its transposition.
    struct GemmState : OpState {
        Dims g;
        int a_packed = -1, untransposed = -1; // a_packed: bfloat16 values with b_bf16
        const uint16_t* b_bf16 = nullptr;     // PrepareContext::bf16: B_bf16_
    };


    static Tensor f32_weight(const Tensor& t, const char* what)
    {
        check(t.dtype() == DType::F32, "int8 weights for ", what, " need quantize_term (param 18), which is not supported");
        return t;
    }

    // An operand's outer size (M of A, N of B) and K. B is laid out as A
    // transposed, so its rows are outer when transB is set, A's when transA is not.
    static std::pair<int64_t, int64_t> outer_and_k(const Shape& s, const char* what, bool rows_are_outer)
    {
        const MatShape m = as_matrix(s, what);
        return rows_are_outer ? std::make_pair(m.rows, m.cols) : std::make_pair(m.cols, m.rows);
    }

    // M, N, K and C's broadcast type from the operands, with every consistency check.
    Dims dims(const std::vector<TensorDesc>& in) const
    {
        Dims g;
        size_t next = 0;
        int64_t kA = 0, kB = 0;
        if (constantA_) {
            g.M = M_;
            kA = K_;
        } else {
            std::tie(g.M, kA) = outer_and_k(in[next++].shape, "A", !transA_);
        }
        if (constantB_) {
            g.N = N_;
            kB = K_;
        } else {
            std::tie(g.N, kB) = outer_and_k(in[next++].shape, "B", transB_);
        }
        check(kA == kB, "K of A (", kA, ") and of B (", kB, ") differ");
        g.K = kA;
        if (constantC_) {
            g.typeC = typeC_;
            if (typeC_ >= 1 && typeC_ <= 3)
                check(g.M == M_, "constant C is sized for M=", M_, " (param 7) but A gives M=", g.M);
            if (typeC_ >= 3) check(g.N == N_, "constant C is sized for N=", N_, " (param 8) but B gives N=", g.N);
        } else if (next < in.size()) {
            const Shape& c = in[next].shape;
            // ncnn's inference of the broadcast type: later matches win.
            int t = c.empty() ? 0 : -1; // a scalar (ONNX) is [1]
            if (c.size() == 1) {
                if (c[0] == 1) t = 0;
                if (c[0] == g.M) t = 1;
                if (c[0] == g.N) t = 4;
            } else if (c.size() == 2) {
                if (c[1] == 1 && c[0] == g.M) t = 2;
                if (c[1] == g.N && c[0] == g.M) t = 3;
                if (c[1] == g.N && c[0] == 1) t = 4;
            }
            check(t >= 0, "C ", shape_str(c), " does not broadcast to (M, N) = (", g.M, ", ", g.N,
                  "): expected [1], [M], [N], (M, 1), (M, N) or (1, N)");
            g.typeC = t;
        }
        return g;
    }

    float alpha_ = 1.f, beta_ = 1.f;
    int transA_ = 0, transB_ = 0, constantA_ = 0, constantB_ = 0, constantC_ = 0;
    int M_ = 0, N_ = 0, K_ = 0, typeC_ = 0;
    int output_N1M_ = 0, output_transpose_ = 0;
    std::vector<float> A_packed_; // constant A, packed for gemm_kernel()
    std::vector<float> B_packed_; // constant B in the GEMM's panels
    PackedWeightsOf<uint16_t> B_bf16_; // and as bfloat16 (bf16_gemm_pack_b), once a session asks
    Tensor C_;
};

} // namespace

std::unique_ptr<Op> make_gemm() { return std::make_unique<Gemm>(); }

} // namespace kestrel
