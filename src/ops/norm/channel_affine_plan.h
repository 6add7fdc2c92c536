// A per-channel map's values as data (Scale, BatchNorm, Bias, PReLU; see
// channel_affine.cpp), for backends that apply them themselves (the Vulkan
// backend): the input as (channels, inner), and per channel a scale and a
// bias, or PReLU's slope.
#pragma once
#include "kestrel/op.h"

namespace kestrel {

struct ChannelAffinePlan {
    enum class Form { Affine, Bias, PReLU };
    Form form = Form::Affine;
    Tensor scale, bias;          // float32, one value per channel or one shared; undefined when absent
    int64_t channels = 0, inner = 0;
};

// False when `op` is no such layer or takes its scales from an input.
bool channel_affine_plan(const Op& op, const Shape& in, ChannelAffinePlan& plan);

} // namespace kestrel
