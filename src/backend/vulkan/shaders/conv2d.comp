// 2-D convolution, direct: one output value per invocation, its group's input
// channels and taps summed in (channel, row, column) order, then the bias, the
// residual the optimizer fused (if any), the fused activation. Weights in
// ncnn's layout (outch, inch/group, kh, kw); positions outside the input read
// pad_value.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "common.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) readonly buffer Residual { act_t residual[]; };
layout(std430, binding = 4) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Geometry {
    int in_c, in_h, in_w, out_c, out_h, out_w;
    int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
    int group, has_bias, has_residual, activation;
    float act_a, act_b, pad_value;
} g;

void main()
{
    uint total = uint(g.out_c * g.out_h * g.out_w);
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
        int ox = int(i % uint(g.out_w));
        int oy = int((i / uint(g.out_w)) % uint(g.out_h));
        int oc = int(i / uint(g.out_w * g.out_h));
        int in_per_group = g.in_c / g.group, out_per_group = g.out_c / g.group;
        int ic0 = (oc / out_per_group) * in_per_group;
        float sum = 0.0;
        for (int ic = 0; ic < in_per_group; ++ic) {
            int wbase = (oc * in_per_group + ic) * g.kernel_h * g.kernel_w;
            int xbase = (ic0 + ic) * g.in_h * g.in_w;
            for (int ky = 0; ky < g.kernel_h; ++ky) {
                int iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
                for (int kx = 0; kx < g.kernel_w; ++kx) {
                    int ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
                    bool inside = iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w;
                    float v = inside ? float(x[xbase + iy * g.in_w + ix]) : g.pad_value;
                    sum += v * w[wbase + ky * g.kernel_w + kx];
                }
            }
        }
        if (g.has_bias != 0) sum += bias[oc];
        if (g.has_residual != 0) sum += float(residual[i]);
        y[i] = act_t(activate(g.activation, sum, g.act_a, g.act_b));
    }
}
