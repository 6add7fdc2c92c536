// The activation family. One-input activations (ReLU, Clip, Sigmoid, Swish, GELU, ...: one
// pointwise template, vector kernels for the exp-based ones; Exp/Log/Power of
// an affine map, Threshold; ncnn's layers that are ops of the typed unary table,
// ncnn_typed_activations.cpp: AbsVal, BNLL, Softplus, Erf, ELU, CELU, SELU,
// Shrink) and the
// softmax family along an axis (Softmax, LogSoftmax, Hardmax). activation.h is
// the activation that Convolution, InnerProduct, ... fuse (ncnn params 9/10).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_relu();
std::unique_ptr<Op> make_clip();
std::unique_ptr<Op> make_sigmoid();
std::unique_ptr<Op> make_swish();
std::unique_ptr<Op> make_hard_sigmoid();
std::unique_ptr<Op> make_hard_swish();
std::unique_ptr<Op> make_gelu();
std::unique_ptr<Op> make_mish();
std::unique_ptr<Op> make_tanh();
std::unique_ptr<Op> make_log_softmax();
std::unique_ptr<Op> make_hardmax();
std::unique_ptr<Op> make_softmax();
std::unique_ptr<Op> make_threshold();
std::unique_ptr<Op> make_exp();
std::unique_ptr<Op> make_log();
std::unique_ptr<Op> make_power();
std::unique_ptr<Op> make_absval();
std::unique_ptr<Op> make_bnll();
std::unique_ptr<Op> make_softplus();
std::unique_ptr<Op> make_erf();
std::unique_ptr<Op> make_elu();
std::unique_ptr<Op> make_celu();
std::unique_ptr<Op> make_selu();
std::unique_ptr<Op> make_shrink();
std::unique_ptr<Op> make_glu();

std::vector<BuiltinOp> activation_family()
{
    return {
        {"ReLU", make_relu},
        {"Clip", make_clip},
        {"Sigmoid", make_sigmoid},
        {"Swish", make_swish},
        {"HardSigmoid", make_hard_sigmoid},
        {"HardSwish", make_hard_swish},
        {"GELU", make_gelu},
        {"Mish", make_mish},
        {"TanH", make_tanh},
        {"LogSoftmax", make_log_softmax},
        {"Hardmax", make_hardmax},
        {"Softmax", make_softmax},
        {"Threshold", make_threshold},
        {"Exp", make_exp},
        {"Log", make_log},
        {"Power", make_power},
        {"AbsVal", make_absval},
        {"BNLL", make_bnll},
        {"Softplus", make_softplus},
        {"Erf", make_erf},
        {"ELU", make_elu},
        {"CELU", make_celu},
        {"SELU", make_selu},
        {"Shrink", make_shrink},
        {"GLU", make_glu},
    };
}

} // namespace kestrel
