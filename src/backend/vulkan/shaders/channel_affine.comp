// Per-channel maps (ops/norm/channel_affine_plan.h): x as (channels, inner);
// y = x * scale[c] + bias[c] (either may be absent), or PReLU's
// x < 0 ? x * slope[c] : x. One value for all when `one_value`.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) readonly buffer Scale { float scale[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Params {
    uint count, inner;
    int prelu, has_scale, has_bias, one_value;
} p;

void main()
{
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.count; i += step) {
        const uint c = p.one_value != 0 ? 0u : i / p.inner;
        const float v = float(x[i]);
        if (p.prelu != 0) {
            y[i] = act_t(v < 0.0 ? v * scale[c] : v);
            continue;
        }
        float r = p.has_scale != 0 ? v * scale[c] : v;
        if (p.has_bias != 0) r += bias[c];
        y[i] = act_t(r);
    }
}
