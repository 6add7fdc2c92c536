// MatMul's product as data (see matmul.cpp), for backends that multiply
// themselves (the Vulkan backend): batches of (M x K) . (K x N) and, per
// output batch, which matrix of A and of B it takes (numpy's broadcast of the
// batch axes).
#pragma once
#include <vector>

#include "kestrel/op.h"

namespace kestrel {

struct MatMulPlan {
    int64_t M = 1, N = 1, K = 1;
    int64_t batches = 1;
    std::vector<int64_t> a_batch, b_batch; // per output batch: which A / B matrix (broadcast)
    bool transB = false;                   // B stored (N, K)
    Shape out;
};

// False when `op` is no MatMul layer; throws as the layer does on shapes it rejects.
bool matmul_plan(const Op& op, const std::vector<TensorDesc>& in, MatMulPlan& plan);

} // namespace kestrel
