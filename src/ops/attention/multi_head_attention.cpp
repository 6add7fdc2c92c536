// MultiHeadAttention (ncnn params):
//   0=embed_dim 1=num_heads (1) 2=weight_data_size (qdim = size / embed_dim)
//   3=kdim (embed_dim) 4=vdim (embed_dim) 5=attn_mask (0)
//   6=scale (1 / sqrt(embed_dim / num_heads), integer division as ncnn)
//   7=kv_cache (0) 18=quantize_term (int8 / weight-quantized: refused)
// Weights, in order (weights tagged, biases raw fp32):
//   q_weight [embed_dim][qdim], q_bias [embed_dim], k_weight [embed_dim][kdim],
//   k_bias, v_weight [embed_dim][vdim], v_bias, out_weight [qdim][embed_dim],
//   out_bias [qdim].
// Inputs: q; or q, kv; or q, k, v (2-D (seq, dim); 1-D is one row); then the
// mask when attn_mask=1, (src_seq, dst_seq) or (num_heads, src_seq, dst_seq),
// added to the scaled scores; then with kv_cache=1 the cached projected k and
// v, (embed_dim, past_seq) each (empty = no past). Output (src_seq, qdim);
// with kv_cache also the new k and v caches (embed_dim, dst_seq).
// As ncnn: q is scaled after its projection (bias included); with a cache,
// self-attention (one q/k/v input) appends the new keys to the cached ones,
// cross-attention (separate k/v inputs) uses the cache alone.
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/attention.h"
#include "kernels/bf16_gemm.h"
#include "kernels/gemm.h"
#include "ops/common/packed_weights.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

int flag_param(const ParamDict& pd, int id, const char* what)
{
    const int v = pd.get_int(id, 0);
    check(v == 0 || v == 1, what, " (param ", id, ") must be 0 or 1, got ", v);
    return v;
}

// (rows, cols) of a q/k/v input: 2-D as is, 1-D as one row.
std::pair<int64_t, int64_t> rows_cols(const Shape& s, const char* what)
{
    check(s.size() == 1 || s.size() == 2, what, " must be 1-D or 2-D (seq, dim), got ", shape_str(s));
    return s.size() == 1 ? std::make_pair(int64_t(1), s[0]) : std::make_pair(s[0], s[1]);
}

// A projection's weight W [out][in] as the B of x W^T, packed once into the
// GEMM's panels (kernels/gemm.h).
std::vector<float> packed_projection(const Tensor& w, int64_t out, int64_t in)
{
    const GemmKernel& kern = gemm_kernel();
    return gemm_pack_b(kern, out, in, GemmTransposedB{w.data<float>(), in, in, kern.nr});
}

class MultiHeadAttention : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        embed_dim_ = positive_param(pd, 0, 0, "embed_dim");
        num_heads_ = positive_param(pd, 1, 1, "num_heads");
        check(embed_dim_ % num_heads_ == 0, "embed_dim (param 0) ", embed_dim_, " is not a multiple of num_heads (param 1) ",
              num_heads_);
        const int wsize = positive_param(pd, 2, 0, "weight_data_size");
        check(wsize % embed_dim_ == 0, "weight_data_size (param 2) ", wsize, " is not a multiple of embed_dim ", embed_dim_);
        qdim_ = wsize / embed_dim_;
        kdim_ = positive_param(pd, 3, embed_dim_, "kdim");
        vdim_ = positive_param(pd, 4, embed_dim_, "vdim");
        attn_mask_ = flag_param(pd, 5, "attn_mask");
        scale_ = pd.get_float(6, 1.f / std::sqrt(static_cast<float>(embed_dim_ / num_heads_)));
        kv_cache_ = flag_param(pd, 7, "kv_cache");
        const int quantize_term = pd.get_int(18, 0);
        check(quantize_term == 0, "quantize_term (param 18) ", quantize_term,
              " (int8 / weight-quantized attention) is not supported");
    }

    void load_model(WeightReader& wr) override
    {
        const int64_t E = embed_dim_;
        for (PackedWeightsOf<uint16_t>& w : bf16_) w.reset();
        Wq_ = packed_projection(weight(wr, E * qdim_, "q_weight"), E, qdim_);
        bq_ = bias(wr, E, "q_bias");
        Wk_ = packed_projection(weight(wr, E * kdim_, "k_weight"), E, kdim_);
        bk_ = bias(wr, E, "k_bias");
        Wv_ = packed_projection(weight(wr, E * vdim_, "v_weight"), E, vdim_);
        bv_ = bias(wr, E, "v_bias");
        Wo_ = packed_projection(weight(wr, int64_t(qdim_) * E, "out_weight"), qdim_, E);
        bo_ = bias(wr, qdim_, "out_bias");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        for (const auto& d : in) expect_f32(d);
        const Layout l = layout(in.size());
        expect_output_count(out, kv_cache_ ? 3 : 1);
        const Sizes z = sizes(in, l);
        out[0] = TensorDesc();
        out[0].shape = {z.src, qdim_};
        if (kv_cache_) {
            out[1] = TensorDesc();
            out[1].shape = {embed_dim_, z.dst};
            out[2] = out[1];
        }
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&) const override
    {
        const Sizes z = sizes(in, layout(in.size()));
        const int64_t E = embed_dim_;
        return z.src * E * qdim_ + z.cur * E * (kdim_ + vdim_) + 2 * z.src * z.dst * E + z.src * qdim_ * E;
    }

    int64_t weight_bytes() const override
    {
        int64_t n = 0;
        for (const Tensor* t : {&bq_, &bk_, &bv_, &bo_}) n += static_cast<int64_t>(t->nbytes());
        for (const std::vector<float>* w : {&Wq_, &Wk_, &Wv_, &Wo_}) n += static_cast<int64_t>(w->size() * sizeof(float));
        for (const PackedWeightsOf<uint16_t>& w : bf16_) n += static_cast<int64_t>(w.floats() * sizeof(uint16_t));
        return n;
    }

    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        auto st = std::make_unique<AttentionState>();
        st->z = sizes(in, layout(in.size()));
        const int64_t E = embed_dim_, floats = 4;
        st->q = ctx.request_scratch(st->z.src * E * floats);
        st->k = ctx.request_scratch(st->z.dst * E * floats);
        st->v = ctx.request_scratch(st->z.dst * E * floats);
        st->o = ctx.request_scratch(st->z.src * E * floats);
        const GemmKernel& kern = gemm_kernel();
        const int64_t packed = std::max({gemm_packed_a_floats(kern, st->z.src, qdim_),
                                         gemm_packed_a_floats(kern, st->z.cur, std::max(kdim_, vdim_)),
                                         gemm_packed_a_floats(kern, st->z.src, E)});
        st->packed.resize(static_cast<size_t>(packed));
        if (ctx.bf16()) {
            // bfloat16 projections (PrepareContext::bf16): copies built by the first such prepare.
            const Bf16GemmKernel& bk = bf16_gemm_kernel();
            const std::vector<float>* W[4] = {&Wq_, &Wk_, &Wv_, &Wo_};
            const int64_t in_dims[4] = {qdim_, kdim_, vdim_, E}, out_dims[4] = {E, E, E, qdim_};
            for (int i = 0; i < 4; ++i)
                st->bf16[i] = bf16_[i].get([&] {
                    return bf16_gemm_pack_b_from_float_panels(bk, W[i]->data(), in_dims[i], out_dims[i], kern.nr);
                });
            st->packed_bf16.resize(static_cast<size_t>(
                std::max({bf16_gemm_packed_a_values(bk, st->z.src, qdim_),
                          bf16_gemm_packed_a_values(bk, st->z.cur, std::max(kdim_, vdim_)),
                          bf16_gemm_packed_a_values(bk, st->z.src, E)})));
        }
        return st;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Layout l = layout(in.size());
        const AttentionState& st = ctx.state_as<AttentionState>();
        const int64_t E = embed_dim_, H = num_heads_, D = E / H;
        const int64_t src = st.z.src, cur = st.z.cur, past = st.z.past, dst = st.z.dst;
        Packing packing{ctx.state_as<AttentionState>().packed.data(), ctx.state_as<AttentionState>().packed_bf16.data()};

        // Q (src, E), scaled after the bias as ncnn.
        Tensor Q = Tensor::wrap(ctx.scratch(st.q), {src, E});
        project(in[l.q].data<float>(), src, qdim_, {Wq_, st.bf16[0], bq_}, E, scale_, Q.data<float>(), packing, ctx);

        // K and V rows (dst, E): cached rows first (stored transposed, (E, past)), then new ones.
        Tensor K = Tensor::wrap(ctx.scratch(st.k), {dst, E}), V = Tensor::wrap(ctx.scratch(st.v), {dst, E});
        const bool self_attention = l.k == l.q;
        const bool use_new = past == 0 || self_attention;
        for (int which = 0; which < 2; ++which) {
            float* rows = (which == 0 ? K : V).data<float>();
            if (past > 0) {
                const float* cache = in[which == 0 ? l.cached_k : l.cached_v].data<float>();
                for (int64_t e = 0; e < E; ++e)
                    for (int64_t j = 0; j < past; ++j) rows[j * E + e] = cache[e * past + j];
            }
            if (use_new) {
                const float* x = in[which == 0 ? l.k : l.v].data<float>();
                const Projection w = which == 0 ? Projection{Wk_, st.bf16[1], bk_} : Projection{Wv_, st.bf16[2], bv_};
                project(x, cur, which == 0 ? kdim_ : vdim_, w, E, 1.f, rows + (self_attention ? past : 0) * E, packing,
                        ctx);
            }
        }

        // Per head and block of query rows: the attention kernel (Q already scaled).
        float* o = ctx.scratch_as<float>(st.o);
        const float* mask = attn_mask_ ? in[l.mask].data<float>() : nullptr;
        const bool mask_per_head = attn_mask_ && in[l.mask].rank() == 3;
        const int64_t blocks = (src + kAttentionRowBlock - 1) / kAttentionRowBlock;
        ctx.parallel_for(H * blocks, [&](int64_t begin, int64_t end) {
            thread_local std::vector<float> scratch; // the thread's own, kept from call to call
            for (int64_t item = begin; item < end; ++item) {
                const int64_t h = item / blocks, i0 = item % blocks * kAttentionRowBlock;
                const AttentionHead head{Q.data<float>() + h * D, E, K.data<float>() + h * D, E,
                                         V.data<float>() + h * D, E, o + h * D, E, src, dst, D, D};
                AttentionMask add_mask;
                if (mask) {
                    const float* m = mask + (mask_per_head ? h * src * dst : 0);
                    add_mask = [m, dst](int64_t i, float* s) {
                        for (int64_t j = 0; j < dst; ++j) s[j] += m[i * dst + j];
                    };
                }
                attention_rows(head, 1.f, add_mask, i0, std::min(kAttentionRowBlock, src - i0), scratch);
            }
        });

        project(o, src, E, {Wo_, st.bf16[3], bo_}, qdim_, 1.f, out[0].data<float>(), packing, ctx);

        if (kv_cache_) {
            for (int which = 0; which < 2; ++which) {
                const float* rows = (which == 0 ? K : V).data<float>();
                float* cache = out[1 + which].data<float>();
                ctx.parallel_for(E, [&](int64_t begin, int64_t end) {
                    for (int64_t e = begin; e < end; ++e)
                        for (int64_t j = 0; j < dst; ++j) cache[e * dst + j] = rows[j * E + e];
                });
            }
        }
    }

private:
    // Input positions; -1 when absent.
    struct Layout {
        int q = 0, k = 0, v = 0, mask = -1, cached_k = -1, cached_v = -1;
    };
    struct Sizes {
        int64_t src = 0, cur = 0, past = 0, dst = 0;
    };

    // The sizes, and scratch: Q, K, V and the heads' output O as rows of E values.
    struct AttentionState : OpState {
        Sizes z;
        int q = 0, k = 0, v = 0, o = 0;
        // The projections' packed rows. Kept here, not in the arena: beside Q, K
        // and V there, packing into it measured 5% slower (ViT at 1 thread).
        std::vector<float> packed;
        // PrepareContext::bf16: the projections' bfloat16 weights (q, k, v,
        // out), and their rows packed as bfloat16.
        const uint16_t* bf16[4] = {};
        std::vector<uint16_t> packed_bf16;
    };
    // A projection's weights: packed_projection's, and bfloat16 ones or nullptr.
    struct Projection {
        const std::vector<float>& W;
        const uint16_t* bf16;
        const Tensor& b;
    };
    // Where a projection packs its rows (fp32, bfloat16).
    struct Packing {
        float* floats;
        uint16_t* bf16;
    };


    Layout layout(size_t count) const
    {
        const size_t extra = size_t(attn_mask_) + (kv_cache_ ? 2 : 0);
        check(count >= 1 + extra && count <= 3 + extra, "expects ", 1 + extra, " to ", 3 + extra,
              " inputs (q [k [v]]", attn_mask_ ? " mask" : "", kv_cache_ ? " cached_k cached_v" : "", "), got ", count);
        const int qkv = static_cast<int>(count - extra);
        Layout l;
        l.k = qkv >= 2 ? 1 : 0;
        l.v = qkv == 3 ? 2 : l.k;
        int next = qkv;
        if (attn_mask_) l.mask = next++;
        if (kv_cache_) {
            l.cached_k = next++;
            l.cached_v = next++;
        }
        return l;
    }

    Sizes sizes(const std::vector<TensorDesc>& in, const Layout& l) const
    {
        Sizes z;
        const auto q = rows_cols(in[l.q].shape, "q");
        const auto k = rows_cols(in[l.k].shape, "k");
        const auto v = rows_cols(in[l.v].shape, "v");
        check(q.second == qdim_, "q ", shape_str(in[l.q].shape), " must have ", qdim_, " columns (weight_data_size / embed_dim)");
        check(k.second == kdim_, "k ", shape_str(in[l.k].shape), " must have kdim ", kdim_, " columns");
        check(v.second == vdim_, "v ", shape_str(in[l.v].shape), " must have vdim ", vdim_, " columns");
        check(k.first == v.first, "k ", shape_str(in[l.k].shape), " and v ", shape_str(in[l.v].shape),
              " must have the same number of rows");
        z.src = q.first;
        z.cur = k.first;
        if (kv_cache_) {
            const Shape& ck = in[l.cached_k].shape;
            const Shape& cv = in[l.cached_v].shape;
            const bool empty = shape_numel(ck) == 0;
            if (!empty) {
                check(ck.size() == 2 && ck[0] == embed_dim_, "cached k must be (embed_dim ", embed_dim_,
                      ", past_seq), got ", shape_str(ck));
                z.past = ck[1];
            }
            check(empty ? shape_numel(cv) == 0 : cv == ck, "cached v ", shape_str(cv), " must match cached k ",
                  shape_str(ck));
        }
        z.dst = z.past > 0 ? (l.k == l.q ? z.past + z.cur : z.past) : z.cur;
        if (attn_mask_) {
            const Shape& m = in[l.mask].shape;
            const bool ok = (m.size() == 2 && m[0] == z.src && m[1] == z.dst) ||
                            (m.size() == 3 && m[0] == num_heads_ && m[1] == z.src && m[2] == z.dst);
            check(ok, "attn_mask ", shape_str(m), " must be (", z.src, ", ", z.dst, ") or (", num_heads_, ", ", z.src,
                  ", ", z.dst, ")");
        }
        return z;
    }

    static Tensor weight(WeightReader& wr, int64_t n, const char* what)
    {
        Tensor t = wr.load(n, WeightEncoding::Tagged);
        check(t.dtype() == DType::F32, "int8 ", what, " needs quantize_term (param 18), which is not supported");
        return t;
    }
    static Tensor bias(WeightReader& wr, int64_t n, const char* what)
    {
        Tensor t = wr.load(n, WeightEncoding::Raw);
        check(t.dtype() == DType::F32, what, " must be float32");
        return t;
    }

    // y[r][o] = (b[o] + sum_i x[r][i] * W[o][i]) * scale for r < rows, with W
    // from packed_projection: a GEMM (kernels/gemm.h) starting from the bias;
    // `packing` holds x packed for it. With bfloat16 weights, the bfloat16
    // GEMM, then the bias and the scale.
    static void project(const float* x, int64_t rows, int64_t in_dim, const Projection& w, int64_t out_dim,
                        float scale, float* y, const Packing& packing, const ExecContext& ctx)
    {
        const float* bias = w.b.data<float>();
        if (w.bf16) {
            bf16_gemm_rows(bf16_gemm_kernel(), rows, out_dim, in_dim, x, in_dim, w.bf16, y, packing.bf16, ctx);
            ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
                for (int64_t r = begin; r < end; ++r)
                    for (int64_t o = 0; o < out_dim; ++o) y[r * out_dim + o] = (y[r * out_dim + o] + bias[o]) * scale;
            });
            return;
        }
        ctx.parallel_for(rows, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) std::copy(bias, bias + out_dim, y + r * out_dim);
        });
        const GemmKernel& kern = gemm_kernel();
        gemm_pack_a_into(kern, x, rows, in_dim, in_dim, 1, packing.floats, ctx);
        gemm_f32(kern, rows, out_dim, in_dim, packing.floats, GemmStart::C, nullptr, y, out_dim,
                 GemmPackedB{w.W.data(), in_dim, kern.nr},
                 [&](int64_t, float* values, int64_t count) {
                     if (scale != 1.f)
                         for (int64_t j = 0; j < count; ++j) values[j] *= scale;
                 },
                 ctx);
    }

    int embed_dim_ = 0, num_heads_ = 1, qdim_ = 0, kdim_ = 0, vdim_ = 0, attn_mask_ = 0, kv_cache_ = 0;
    float scale_ = 1.f;
    std::vector<float> Wq_, Wk_, Wv_, Wo_; // packed_projection
    PackedWeightsOf<uint16_t> bf16_[4];    // the same as bfloat16 (q, k, v, out), once a session asks
    Tensor bq_, bk_, bv_, bo_;
};

} // namespace

std::unique_ptr<Op> make_multi_head_attention() { return std::make_unique<MultiHeadAttention>(); }

} // namespace kestrel
