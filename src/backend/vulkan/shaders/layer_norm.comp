// ncnn's LayerNorm (ops/norm/layer_norm_plan.h): one group of `size`
// contiguous values per invocation; mean, then the population variance from
// it (two passes, compensated sums in place of the CPU's doubles); then ncnn's
// float step a = 1 / sqrt(var + eps), b = -mean * a, y = (x * a + b) * gamma +
// beta (without affine, x * a + b).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) readonly buffer Gamma { float gamma[]; };
layout(std430, binding = 2) readonly buffer Beta { float beta[]; };
layout(std430, binding = 3) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Params {
    uint groups, size;
    int affine;
    float eps;
} p;

void main()
{
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint g = gl_GlobalInvocationID.x; g < p.groups; g += step) {
        const uint base = g * p.size;
        float sum = 0.0, lost = 0.0;
        for (uint i = 0; i < p.size; ++i) {
            const float t = float(x[base + i]) - lost, s = sum + t;
            lost = (s - sum) - t;
            sum = s;
        }
        const float mean = sum / float(p.size);
        float squares = 0.0;
        lost = 0.0;
        for (uint i = 0; i < p.size; ++i) {
            const float d = float(x[base + i]) - mean;
            const float t = d * d - lost, s = squares + t;
            lost = (s - squares) - t;
            squares = s;
        }
        const float a = 1.0 / sqrt(squares / float(p.size) + p.eps), b = -mean * a;
        for (uint i = 0; i < p.size; ++i) {
            const float v = float(x[base + i]) * a + b;
            y[base + i] = act_t(p.affine != 0 ? v * gamma[i] + beta[i] : v);
        }
    }
}
