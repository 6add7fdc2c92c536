// The activation family. One-input activations (ReLU, Clip, Sigmoid, Swish, GELU, ...: one
// pointwise template, vector kernels for the exp-based ones; Exp/Log/Power of
// an affine map, Threshold; ncnn's layers that are ops of the typed unary table,
// ncnn_typed_activations.cpp: AbsVal, BNLL, Softplus, Erf, ELU, CELU, SELU,
// Shrink) and the
// softmax family along an axis (Softmax, LogSoftmax, Hardmax). activation.h is
// the activation that Convolution, InnerProduct, ... fuse (ncnn params 9/10).
#include <cfloat>

#include "ops/activation/activation.h"
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

namespace {

// The activations a convolution-like layer fuses exactly (ncnn's activation_type
// and params). Sigmoid has none: the fused form clamps its input, as ncnn's does.
bool relu_fused(const ParamDict& pd, int& type, std::vector<float>& args)
{
    const float slope = pd.get_float(0, 0.f);
    type = slope == 0.f ? Activation::ReLU : Activation::LeakyReLU;
    if (slope != 0.f) args = {slope};
    return true;
}
bool clip_fused(const ParamDict& pd, int& type, std::vector<float>& args)
{
    type = Activation::Clip;
    args = {pd.get_float(0, -FLT_MAX), pd.get_float(1, FLT_MAX)};
    return true;
}
bool mish_fused(const ParamDict&, int& type, std::vector<float>&)
{
    type = Activation::Mish;
    return true;
}
bool swish_fused(const ParamDict&, int& type, std::vector<float>&)
{
    type = Activation::Swish;
    return true;
}
bool hard_swish_fused(const ParamDict& pd, int& type, std::vector<float>& args)
{
    type = Activation::HardSwish;
    args = {pd.get_float(0, 0.2f), pd.get_float(1, 0.5f)};
    return true;
}

LayerTraits fused_as(bool (*as_fused)(const ParamDict&, int&, std::vector<float>&), bool needs_vector_exp = false)
{
    LayerTraits t;
    t.as_fused_activation = as_fused;
    t.fused_needs_vector_exp = needs_vector_exp;
    return t;
}

} // namespace

std::vector<BuiltinOp> activation_family()
{
    return {
        {"ReLU", make_relu, fused_as(relu_fused)},
        {"Clip", make_clip, fused_as(clip_fused)},
        {"Sigmoid", make_sigmoid},
        {"Swish", make_swish, fused_as(swish_fused, true)},
        {"HardSigmoid", make_hard_sigmoid},
        {"HardSwish", make_hard_swish, fused_as(hard_swish_fused)},
        {"GELU", make_gelu},
        {"Mish", make_mish, fused_as(mish_fused)},
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
