// The matmul family. Products of matrices: InnerProduct (ncnn's fully connected layer), Gemm,
// MatMul with numpy batch broadcasting, Einsum, and determinants (Det).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_inner_product();
std::unique_ptr<Op> make_det();
std::unique_ptr<Op> make_gemm();
std::unique_ptr<Op> make_matmul();
std::unique_ptr<Op> make_einsum();

namespace {

// A fully connected layer: bias switch 1 (its per-value paths take std::exp,
// so a fused Swish would not give the Swish layer's bits).
LayerTraits inner_product_traits()
{
    LayerTraits t;
    t.bias_param = 1;
    return t;
}

} // namespace

std::vector<BuiltinOp> matmul_family()
{
    return {
        {"InnerProduct", make_inner_product, inner_product_traits()},
        {"Det", make_det},
        {"Gemm", make_gemm},
        {"MatMul", make_matmul},
        {"Einsum", make_einsum},
    };
}

} // namespace kestrel
