// Scaled dot-product attention of one head on the GEMM (kernels/gemm.h):
// S = Q K^T * scale (+ a mask), a softmax along each row (softmax_row.h), then
// O = P V. The MultiHeadAttention and SDPA ops both run on it, each over its
// heads and blocks of query rows in parallel; a block's GEMMs run on the
// calling thread. Each output is computed the same way whatever the blocks.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/gemm.h"

namespace kestrel {

// One head's matrices, row-major with their row strides (in floats).
struct AttentionHead {
    const float* q; // Lq rows of D
    int64_t ldq;
    const float* k; // Lk rows of D
    int64_t ldk;
    const float* v; // Lk rows of Dv
    int64_t ldv;
    float* out;     // Lq rows of Dv
    int64_t ldo;
    int64_t Lq, Lk, D, Dv;
};

// Adds query row i's mask to its Lk scores (after the scale).
using AttentionMask = std::function<void(int64_t i, float* scores)>;

// Query rows per block: their scores stay in cache between the two GEMMs.
constexpr int64_t kAttentionRowBlock = 64;

// Output rows [row0, row0 + rows) of the head (rows <= kAttentionRowBlock);
// `scratch` is a thread's own, reused between calls.
void attention_rows(const AttentionHead& h, float scale, const AttentionMask& mask, int64_t row0, int64_t rows,
                    std::vector<float>& scratch);

} // namespace kestrel
