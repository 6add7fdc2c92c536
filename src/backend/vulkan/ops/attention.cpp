// Attention on the GPU from batched strided products (shaders/matmul.comp)
// and Softmax's lanes (shaders/softmax.comp), every head a batch of strided
// views, in one submission:
//   MultiHeadAttention (ncnn's): Q = (q Wq^T + bq) * scale, K = k Wk^T + bk,
//     V = v Wv^T + bv; per head S = Q_h K_h^T [+ mask], softmax over keys,
//     O_h = S V_h; out = O Wo^T + bo. The weights as loaded; no kv cache.
//   SDPA: per batch S = q k^T * scale [+ mask], softmax, out = S v; q, k, v
//     of rank 3 with one batch size (no broadcast or grouped heads), no cache.
#include <cmath>

#include "backend/vulkan/gpu_kernel.h"
#include "backend/vulkan/ops/matmul.h"

namespace kestrel::vulkan {

namespace {

struct PushLanes {
    uint32_t outer, n, inner;
};

Dispatch softmax_rows(const Buffer* s, const Buffer* y, int64_t rows, int64_t n)
{
    return dispatch_of("softmax", {s, y}, PushLanes{uint32_t(rows), uint32_t(n), 1}, uint64_t(rows), 64);
}

bool fits(int64_t v) { return v > 0 && v < (int64_t{1} << 31); }

// (rows, cols) of a q/k/v input of MultiHeadAttention: 2-D, or 1-D as one row.
bool rows_cols(const Shape& s, int64_t& rows, int64_t& cols)
{
    if (s.size() == 1) rows = 1, cols = s[0];
    else if (s.size() == 2) rows = s[0], cols = s[1];
    else return false;
    return true;
}

// Mask strides over (head, query row, key column) for a mask of shape `s`
// against `heads` x (rows, cols): 2-D shared by the heads, 3-D per head; a
// dim of 1 repeats.
bool mask_strides(const Shape& s, int64_t heads, int64_t rows, int64_t cols, Strides& ms)
{
    if (s.size() < 2 || s.size() > 3) return false;
    const int64_t r = s[s.size() - 2], c = s.back(), h = s.size() == 3 ? s[0] : 1;
    if ((r != rows && r != 1) || (c != cols && c != 1) || (h != heads && h != 1)) return false;
    ms = Strides{h == 1 ? 0 : r * c, r == 1 ? 0 : c, c == 1 ? 0 : 1};
    return true;
}

} // namespace

std::unique_ptr<DeviceKernel> make_multi_head_attention_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                               const std::vector<TensorDesc>& in,
                                                               const std::vector<TensorDesc>& out)
{
    const ParamDict& pd = l.params;
    if (pd.get_int(7, 0) != 0 || pd.get_int(18, 0) != 0 || out.size() != 1 || l.weights.size() != 8) return nullptr;
    for (const TensorDesc& d : in)
        if (d.dtype != DType::F32) return nullptr;
    const int64_t E = pd.get_int(0, 0), heads = pd.get_int(1, 1), wsize = pd.get_int(2, 0);
    const bool masked = pd.get_int(5, 0) == 1;
    if (E <= 0 || heads <= 0 || E % heads != 0 || wsize % E != 0) return nullptr;
    const int64_t qdim = wsize / E, kdim = pd.get_int(3, int(E)), vdim = pd.get_int(4, int(E)), d = E / heads;
    const float scale = pd.get_float(6, 1.f / std::sqrt(static_cast<float>(E / heads)));
    const size_t qkv = in.size() - (masked ? 1 : 0);
    if (qkv < 1 || qkv > 3) return nullptr;
    const size_t ki = qkv >= 2 ? 1 : 0, vi = qkv == 3 ? 2 : ki;
    int64_t src = 0, dst = 0, dst_v = 0, cq = 0, ck = 0, cv = 0;
    if (!rows_cols(in[0].shape, src, cq) || !rows_cols(in[ki].shape, dst, ck) || !rows_cols(in[vi].shape, dst_v, cv))
        return nullptr;
    if (cq != qdim || ck != kdim || cv != vdim || dst != dst_v) return nullptr;
    Strides ms;
    if (masked && !mask_strides(in.back().shape, heads, src, dst, ms)) return nullptr;
    for (int64_t v : {src * E, dst * E, heads * src * dst, src * qdim, E * std::max({qdim, kdim, vdim})})
        if (!fits(v)) return nullptr;
    for (size_t i = 0; i < 8; ++i)
        if (l.weights[i].value.dtype() != DType::F32) return nullptr;
    auto k = std::make_unique<StepsKernel>(device);
    const Buffer* xq = k->input(0, src * qdim);
    const Buffer* xk = ki == 0 ? xq : k->input(ki, dst * kdim);
    const Buffer* xv = vi == ki ? xk : k->input(vi, dst * vdim);
    const Buffer* mask = masked ? k->input(in.size() - 1, shape_numel(in.back().shape)) : nullptr;
    const auto& w = l.weights;
    const Buffer *Wq = k->constant(w[0].value), *bq = k->constant(w[1].value), *Wk = k->constant(w[2].value),
                 *bk = k->constant(w[3].value), *Wv = k->constant(w[4].value), *bv = k->constant(w[5].value),
                 *Wo = k->constant(w[6].value), *bo = k->constant(w[7].value);
    const Buffer *Q = k->buffer(src * E), *K = k->buffer(dst * E), *V = k->buffer(dst * E);
    const Buffer *S = k->buffer(heads * src * dst), *P = k->buffer(heads * src * dst), *O = k->buffer(src * E);
    const Buffer* Y = k->buffer(src * qdim);
    // x W^T + b: B(k, n) = W[n][k]; the bias per column.
    const auto project = [&](const Buffer* x, const Buffer* W, const Buffer* b, const Buffer* y, int64_t rows,
                             int64_t in_dim, int64_t out_dim, float alpha) {
        k->add(matmul(x, {0, in_dim, 1}, W, {0, 1, in_dim}, b, {0, 0, 1}, y, {0, out_dim, 1}, 1, rows, out_dim, in_dim,
                      alpha));
    };
    project(xq, Wq, bq, Q, src, qdim, E, scale);
    project(xk, Wk, bk, K, dst, kdim, E, 1.f);
    project(xv, Wv, bv, V, dst, vdim, E, 1.f);
    // Head h: Q_h (src, d) at column h*d of Q; K_h^T (d, dst): B(k, n) = K[n][h*d + k].
    k->add(matmul(Q, {d, E, 1}, K, {d, 1, E}, mask, ms, S, {src * dst, dst, 1}, heads, src, dst, d));
    k->add(softmax_rows(S, P, heads * src, dst));
    k->add(matmul(P, {src * dst, dst, 1}, V, {d, E, 1}, nullptr, {}, O, {d, E, 1}, heads, src, d, dst));
    project(O, Wo, bo, Y, src, E, qdim, 1.f);
    k->set_output(Y);
    return k;
}

std::unique_ptr<DeviceKernel> make_sdpa_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                               const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    const ParamDict& pd = l.params;
    const bool masked = pd.get_int(5, 0) == 1;
    if (pd.get_int(7, 0) != 0 || pd.get_int(18, 0) != 0 || out.size() != 1 || in.size() != (masked ? 4u : 3u))
        return nullptr;
    for (const TensorDesc& t : in)
        if (t.dtype != DType::F32) return nullptr;
    const Shape &q = in[0].shape, &kk = in[1].shape, &v = in[2].shape;
    if (q.size() != 3 || kk.size() != 3 || v.size() != 3 || kk[0] != q[0] || v[0] != q[0]) return nullptr;
    const int64_t B = q[0], Lq = q[1], E = q[2], Lk = kk[1], Ev = v[2];
    if (kk[2] != E || v[1] != Lk) return nullptr;
    float scale = pd.get_float(6, 0.f);
    if (scale == 0.f) scale = 1.f / std::sqrt(static_cast<float>(E));
    Strides ms;
    if (masked && !mask_strides(in[3].shape, B, Lq, Lk, ms)) return nullptr;
    for (int64_t n : {B * Lq * E, B * Lk * E, B * Lk * Ev, B * Lq * Lk, B * Lq * Ev})
        if (!fits(n)) return nullptr;
    auto k = std::make_unique<StepsKernel>(device);
    const Buffer *Q = k->input(0, B * Lq * E), *K = k->input(1, B * Lk * E), *V = k->input(2, B * Lk * Ev);
    const Buffer* mask = masked ? k->input(3, shape_numel(in[3].shape)) : nullptr;
    const Buffer *S = k->buffer(B * Lq * Lk), *P = k->buffer(B * Lq * Lk), *Y = k->buffer(B * Lq * Ev);
    // S = q k^T * scale + mask, as scale * (q k^T + mask / scale).
    k->add(matmul(Q, {Lq * E, E, 1}, K, {Lk * E, 1, E}, mask, ms, S, {Lq * Lk, Lk, 1}, B, Lq, Lk, E, scale, 1.f / scale));
    k->add(softmax_rows(S, P, B * Lq, Lk));
    k->add(matmul(P, {Lq * Lk, Lk, 1}, V, {Lk * Ev, Ev, 1}, nullptr, {}, Y, {Lq * Ev, Ev, 1}, B, Lq, Ev, Lk));
    k->set_output(Y);
    return k;
}

} // namespace kestrel::vulkan
