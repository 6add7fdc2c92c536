// What the optimizer must know of a layer type to rewrite around it, as data
// that the layer's op family registers beside its op factories
// (src/ops/<family>/registry.cpp, installed by the op registry): the optimizer
// asks here and includes no op. Param ids are the layers' own (ncnn's).
#pragma once
#include <string>
#include <vector>

#include "kestrel/param_dict.h"

namespace kestrel {

struct LayerTraits {
    // Convolution-like (weights per output channel, param 0 their count;
    // param 8 int8, 9/10 a fused activation as ncnn's activation_type and
    // activation_params, 19 weights as inputs): the param that switches its
    // bias on, or -1. BatchNorm and scalar affine followers fold into its
    // weights, and activations with a fused form fuse into it.
    int bias_param = -1;
    // Whether it applies a fused activation with the vector exp of the
    // activation layers themselves (InnerProduct's per-value paths take std::exp).
    bool activations_by_vector_exp = false;
    // A 2-D convolution that also takes a constant Padding into its pads
    // (params 4, 15, 14, 16, value 18) and a residual sum as a second input
    // switched on by this param; -1 when it takes neither.
    int residual_param = -1;
    // An activation: its ncnn activation_type and params as the fused
    // activation of a convolution-like layer, or false when it has no exact
    // fused form.
    bool (*as_fused_activation)(const ParamDict& params, int& type, std::vector<float>& args) = nullptr;
    // The fused form gives the activation layer's bits only where the layer
    // fusing it applies it with the vector exp (Swish).
    bool fused_needs_vector_exp = false;
};

// Registered by the op registry for the built-in types (before any graph is
// optimized); later registrations replace earlier ones.
void register_layer_traits(const std::string& type, const LayerTraits& traits);
// The type's traits; all-default (nothing to fuse) for types without any.
const LayerTraits& layer_traits(const std::string& type);

} // namespace kestrel
