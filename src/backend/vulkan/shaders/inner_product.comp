// InnerProduct: y[r][o] = activation(sum_i x[r][i] w[o][i] + bias[o]), one
// output value per invocation, the sum in input order.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Shape {
    int rows, num_input, num_output, has_bias, activation;
    float act_a, act_b;
} s;

void main()
{
    uint total = uint(s.rows * s.num_output);
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
        int r = int(i) / s.num_output, o = int(i) % s.num_output;
        float sum = 0.0;
        for (int k = 0; k < s.num_input; ++k) sum += float(x[r * s.num_input + k]) * w[o * s.num_input + k];
        if (s.has_bias != 0) sum += bias[o];
        y[i] = act_t(activate(s.activation, sum, s.act_a, s.act_b));
    }
}
