// MatMul with a constant 2-D B, and the Add of a bias along the last axis that
// usually follows (PyTorch's Linear on rank > 2 inputs), become one
// InnerProduct. InnerProduct flattens inputs of other shapes, so the rewrite
// needs A's rank and last dim from the shape hints:
//   A (K)      -> InnerProduct                 -> (N)
//   A (M, K)   -> InnerProduct, row by row     -> (M, N)
//   A (B, T, K)-> batched InnerProduct, rows of each sample -> (B, T, N)
// Higher ranks are left to MatMul.
#include <algorithm>
#include <cstdint>

#include "graph/pattern_match.h"

namespace kestrel {

namespace {

// InnerProduct weights [N][K] from B (K, N), or (N, K) with transB.
Tensor inner_product_weights(const Tensor& b, bool trans_b)
{
    const int64_t k = trans_b ? b.dim(1) : b.dim(0), n = trans_b ? b.dim(0) : b.dim(1);
    Tensor w({n * k});
    for (int64_t o = 0; o < n; ++o)
        for (int64_t i = 0; i < k; ++i)
            w.data<float>()[o * k + i] = trans_b ? b.data<float>()[o * k + i] : b.data<float>()[i * n + o];
    return w;
}

// The bias vector (N) an Add after the MatMul adds along the last axis, if it is one:
// a scalar, or a constant of N values whose other dims are 1 and whose rank
// does not exceed the product's.
bool bias_of_add(const Graph& g, const Layer& add, int product, int64_t n, size_t product_rank, Tensor& bias)
{
    float scalar = 0.f;
    if (scalar_binary(add, kBinAdd, scalar)) {
        bias = Tensor({n});
        std::fill(bias.data<float>(), bias.data<float>() + n, scalar);
        return true;
    }
    if (!is_two_input_binary(add, kBinAdd, true)) return false;
    const int other = other_input(add, product);
    const Tensor* c = other < 0 || other == product ? nullptr : constant_of(g, other);
    if (c == nullptr || c->dtype() != DType::F32 || static_cast<size_t>(c->rank()) > product_rank) return false;
    if (c->numel() != n && c->numel() != 1) return false;
    for (size_t d = 0; d + 1 < c->shape().size(); ++d)
        if (c->shape()[d] != 1) return false;
    bias = Tensor({n});
    for (int64_t o = 0; o < n; ++o) bias.data<float>()[o] = c->data<float>()[c->numel() == 1 ? 0 : o];
    return true;
}

} // namespace

int fuse_matmul_into_inner_product(Graph& g, const ShapeHints& hints, OptimizeReport& report)
{
    int n_rewrites = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        const Layer& mm = g.layers[li];
        if (mm.type != "MatMul" || mm.bottoms.size() != 2 || mm.tops.size() != 1) continue;
        const Tensor* b = constant_of(g, mm.bottoms[1]);
        const Shape* a_shape = hint_of(g, hints, mm.bottoms[0]);
        if (b == nullptr || b->dtype() != DType::F32 || b->rank() != 2 || a_shape == nullptr) continue;
        const bool trans_b = mm.params.get_int(0, 0) == 1;
        const int64_t k = trans_b ? b->dim(1) : b->dim(0), n = trans_b ? b->dim(0) : b->dim(1);
        const size_t rank = a_shape->size();
        if (rank < 1 || rank > 3 || a_shape->back() != k || k <= 0 || n <= 0 || n * k > INT32_MAX) continue;

        ParamDict pd;
        pd.set_int(0, static_cast<int>(n));
        pd.set_int(2, static_cast<int>(n * k));
        if (rank == 3) pd.set_int(31, kFeatmaskBatched);
        std::vector<Tensor> weights = {inner_product_weights(*b, trans_b)};
        const int add = sole_consumer(g, static_cast<int>(li));
        Tensor bias;
        const bool with_bias = add >= 0 && bias_of_add(g, g.layers[add], mm.tops[0], n, rank, bias);
        if (with_bias) {
            pd.set_int(1, 1);
            weights.push_back(bias);
        }
        const std::string what = "MatMul '" + mm.name + "'" + (with_bias ? " and Add '" + g.layers[add].name + "'" : "");
        replace_layer(g, static_cast<int>(li), "InnerProduct", {mm.bottoms[0]}, pd, weights);
        report.applied.push_back("fused " + what + " into InnerProduct");
        if (with_bias) absorb_follower(g, static_cast<int>(li), add);
        else compact(g); // the B constant may now be dead; relink consumers
        ++n_rewrites;
    }
    return n_rewrites;
}

} // namespace kestrel
