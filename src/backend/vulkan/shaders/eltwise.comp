// One step of Eltwise (ops/elementwise/eltwise_plan.h): y = (ca * a) op b,
// with op 0 product, 1 sum (b times cb), 2 ncnn's max (b when ca * a < b),
// 3 / 4 max / min propagating NaN, 5 the sum divided by `divisor` (Mean's
// last step), 6 none (y = ca * a: a single input).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer A { act_t a[]; };
layout(std430, binding = 1) readonly buffer B { act_t b[]; };
layout(std430, binding = 2) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Params {
    int op;
    uint count;
    float ca, cb, divisor;
} p;

void main()
{
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.count; i += step) {
        const float u = p.ca * float(a[i]);
        float r = u;
        if (p.op != 6) {
            const float v = float(b[i]);
            switch (p.op) {
            case 0: r = u * v; break;
            case 1: r = u + p.cb * v; break;
            case 2: r = u < v ? v : u; break;
            case 3: r = isnan(u) || isnan(v) ? u + v : max(u, v); break;
            case 4: r = isnan(u) || isnan(v) ? u + v : min(u, v); break;
            case 5: r = (u + v) / p.divisor; break;
            }
        }
        y[i] = act_t(r);
    }
}
