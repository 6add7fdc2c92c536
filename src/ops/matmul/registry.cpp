// The matmul family. Products of matrices: InnerProduct (ncnn's fully connected layer), Gemm,
// MatMul with numpy batch broadcasting, Einsum, and determinants (Det).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_inner_product();
std::unique_ptr<Op> make_det();
std::unique_ptr<Op> make_gemm();
std::unique_ptr<Op> make_matmul();
std::unique_ptr<Op> make_einsum();

std::vector<BuiltinOp> matmul_family()
{
    return {
        {"InnerProduct", make_inner_product},
        {"Det", make_det},
        {"Gemm", make_gemm},
        {"MatMul", make_matmul},
        {"Einsum", make_einsum},
    };
}

} // namespace kestrel
