// One step of a resize (ops/resample/resample_plan.h): along one axis of x
// seen as (outer, in_len, inner), output index o of y (outer, out_len, inner)
// is the sum over its taps t of weight[o * taps + t] * x[..., index[o * taps
// + t], ...], taps in order; or `fill` where outside[o] (a crop's outside).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) readonly buffer Index { int index[]; };
layout(std430, binding = 2) readonly buffer Weight { float weight[]; };
layout(std430, binding = 3) readonly buffer Outside { int outside[]; };
layout(std430, binding = 4) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Params {
    uint count, in_len, out_len, inner, taps;
    int has_outside;
    float fill;
} p;

void main()
{
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.count; i += step) {
        const uint e = i % p.inner, o = (i / p.inner) % p.out_len, outer = i / (p.inner * p.out_len);
        if (p.has_outside != 0 && outside[o] != 0) {
            y[i] = act_t(p.fill);
            continue;
        }
        const uint base = outer * p.in_len * p.inner + e;
        float sum = 0.0;
        for (uint t = 0; t < p.taps; ++t) sum += weight[o * p.taps + t] * float(x[base + uint(index[o * p.taps + t]) * p.inner]);
        y[i] = act_t(sum);
    }
}
