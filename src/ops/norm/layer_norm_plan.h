// ncnn's LayerNorm as data (see normalization.cpp), for backends that
// normalize groups themselves (the Vulkan backend): the input as groups of
// `group_size` contiguous values, eps inside the root, and gamma / beta per
// position in the group when affine.
#pragma once
#include "kestrel/op.h"

namespace kestrel {

struct LayerNormPlan {
    int64_t group_size = 0;
    float eps = 0.f;
    Tensor gamma, beta; // undefined without affine
};

// False when `op` is no LayerNorm layer in ncnn's form.
bool layer_norm_plan(const Op& op, const Shape& in, LayerNormPlan& plan);

} // namespace kestrel
