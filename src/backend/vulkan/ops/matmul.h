// The batched strided product of shaders/matmul.comp as Dispatch steps, for
// the kernels built on it (Gemm, MatMul, MultiHeadAttention, SDPA).
#pragma once
#include "backend/vulkan/device.h"

namespace kestrel::vulkan {

// An operand's strides in floats: between batches, rows and columns; and
// where its first batch starts.
struct Strides {
    int64_t batch = 0, row = 0, col = 0, offset = 0;
};

struct MatmulPush {
    int32_t batch, M, N, K;
    int32_t a_b, a_r, a_c, b_b, b_r, b_c, c_b, c_r, c_c, y_b, y_r, y_c;
    int32_t a_o, b_o, c_o, y_o;
    int32_t has_c;
    float alpha, beta;
};
static_assert(sizeof(MatmulPush) <= 128, "push constants stay within Vulkan's guaranteed 128 bytes");

// y[b](m, n) = alpha * (A[b](m, k) B[b](k, n) summed over k + beta * C[b](m, n));
// `c` null for none.
inline Dispatch matmul(const Buffer* a, Strides as, const Buffer* b, Strides bs, const Buffer* c, Strides cs,
                       const Buffer* y, Strides ys, int64_t batch, int64_t M, int64_t N, int64_t K, float alpha = 1.f,
                       float beta = 1.f)
{
    const auto i32 = [](int64_t v) { return static_cast<int32_t>(v); };
    const MatmulPush p{i32(batch),     i32(M),         i32(N),         i32(K),         i32(as.batch),  i32(as.row),
                       i32(as.col),    i32(bs.batch),  i32(bs.row),    i32(bs.col),    i32(cs.batch),  i32(cs.row),
                       i32(cs.col),    i32(ys.batch),  i32(ys.row),    i32(ys.col),    i32(as.offset), i32(bs.offset),
                       i32(cs.offset), i32(ys.offset), c ? 1 : 0,      alpha,          beta};
    const uint64_t tiles = uint64_t(batch) * uint64_t((M + 3) / 4) * uint64_t((N + 3) / 4);
    return dispatch_of("matmul", {a, b, c ? c : a, y}, p, tiles, 64);
}

} // namespace kestrel::vulkan
