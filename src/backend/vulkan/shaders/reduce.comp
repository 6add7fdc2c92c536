// Reduction (ops/reduce/reduction_plan.h): one group per invocation. Group g
// starts at the offset its coordinates over the kept axes give; its elements
// are visited in row-major order of the reduced axes. Sums are compensated
// (Kahan), standing in for the CPU's double accumulation.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Params {
    uint groups, group_size;
    int op, ncnn, kept_rank, reduced_rank;
    uint kept_dims[6];
    uint kept_strides[6];
    uint reduced_dims[6];
    uint reduced_strides[6];
    float coeff;
} p;

const float FLT_MAX = 3.402823466e+38;
const float FLT_MIN = 1.175494351e-38;

uint element(uint base, uint j)
{
    uint at = base;
    for (int k = p.reduced_rank - 1; k >= 0; --k) {
        at += (j % p.reduced_dims[k]) * p.reduced_strides[k];
        j /= p.reduced_dims[k];
    }
    return at;
}

// Compensated sum of f(x) over the group: f 0 value, 1 |value|, 2 value^2,
// 3 exp(value - shift).
float sum_of(uint base, int f, float shift)
{
    float sum = 0.0, lost = 0.0;
    for (uint j = 0; j < p.group_size; ++j) {
        const float v = float(x[element(base, j)]);
        const float t = f == 0 ? v : f == 1 ? abs(v) : f == 2 ? v * v : exp(v - shift);
        const float yk = t - lost, s = sum + yk;
        lost = (s - sum) - yk;
        sum = s;
    }
    return sum;
}

// max (is_max) or min, as the CPU's std::max / std::min fold from `init`.
float extreme(uint base, bool is_max, float init)
{
    float a = init;
    for (uint j = 0; j < p.group_size; ++j) {
        const float v = float(x[element(base, j)]);
        a = is_max ? (a < v ? v : a) : (v < a ? v : a);
    }
    return a;
}

void main()
{
    const float inf = 1.0 / 0.0;
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint g = gl_GlobalInvocationID.x; g < p.groups; g += step) {
        uint base = 0, rem = g;
        for (int k = p.kept_rank - 1; k >= 0; --k) {
            base += (rem % p.kept_dims[k]) * p.kept_strides[k];
            rem /= p.kept_dims[k];
        }
        float r;
        switch (p.op) {
        case 4: r = extreme(base, true, p.ncnn != 0 ? -FLT_MAX : -inf); break;
        case 5: r = extreme(base, false, p.ncnn != 0 ? FLT_MAX : inf); break;
        case 6: {
            r = 1.0;
            for (uint j = 0; j < p.group_size; ++j) r *= float(x[element(base, j)]);
            break;
        }
        case 10: {
            const float m = extreme(base, true, -inf);
            const float shift = isinf(m) || isnan(m) ? 0.0 : m;
            r = log(sum_of(base, 3, shift)) + shift;
            break;
        }
        case 1:
        case 7: r = sum_of(base, 1, 0.0); break;
        case 2: r = sum_of(base, 2, 0.0); break;
        case 8: {
            r = sum_of(base, 2, 0.0);
            r = sqrt(p.ncnn != 0 && r < FLT_MIN ? 0.0 : r);
            break;
        }
        default: {
            r = sum_of(base, 0, 0.0);
            if (p.op == 9) r = log(r);
            if (p.op == 3 && p.ncnn == 0) r /= float(p.group_size);
        }
        }
        y[g] = act_t(p.coeff != 1.0 ? r * p.coeff : r);
    }
}
