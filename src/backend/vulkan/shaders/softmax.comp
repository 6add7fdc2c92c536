// Softmax along one axis: the input as (outer, n, inner), one lane (n values
// `inner` apart) per invocation: y = exp(x - max) / sum(exp(x - max)).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Lanes {
    uint outer, n, inner;
} l;

void main()
{
    uint lanes = l.outer * l.inner;
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint lane = gl_GlobalInvocationID.x; lane < lanes; lane += step) {
        uint start = (lane / l.inner) * l.n * l.inner + lane % l.inner;
        float top = -3.402823466e+38;
        for (uint k = 0u; k < l.n; ++k) top = max(top, float(x[start + k * l.inner]));
        float sum = 0.0;
        for (uint k = 0u; k < l.n; ++k) sum += exp(float(x[start + k * l.inner]) - top);
        for (uint k = 0u; k < l.n; ++k) y[start + k * l.inner] = act_t(exp(float(x[start + k * l.inner]) - top) / sum);
    }
}
