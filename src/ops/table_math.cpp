#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_softmax();
std::unique_ptr<Op> make_layer_norm();
std::unique_ptr<Op> make_batch_norm();
std::unique_ptr<Op> make_scale();
std::unique_ptr<Op> make_lrn();
std::unique_ptr<Op> make_reduction();
std::unique_ptr<Op> make_gemm();
std::unique_ptr<Op> make_matmul();
std::unique_ptr<Op> make_multi_head_attention();
std::unique_ptr<Op> make_sdpa();
std::unique_ptr<Op> make_interp();

std::vector<BuiltinOp> math_ops()
{
    return {
        {"Softmax", make_softmax},
        {"LayerNorm", make_layer_norm},
        {"BatchNorm", make_batch_norm},
        {"Scale", make_scale},
        {"LRN", make_lrn},
        {"Reduction", make_reduction},
        {"Gemm", make_gemm},
        {"MatMul", make_matmul},
        {"MultiHeadAttention", make_multi_head_attention},
        {"SDPA", make_sdpa},
        {"Interp", make_interp},
    };
}

} // namespace kestrel
