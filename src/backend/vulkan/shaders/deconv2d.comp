// 2-D transposed convolution, gathered: output (oc, oy, ox) sits at (oy +
// pad_top, ox + pad_left) of the full output; it sums x[ic][iy][ix] *
// w[oc][ic - group's first][ky][kx] over its group's input channels and the
// taps with iy * stride + ky * dilation landing there, then the bias and the
// fused activation. Weights in ncnn's layout (outch, inch/group, kh, kw).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "common.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Bias { float bias[]; };
layout(std430, binding = 3) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Geometry {
    int in_c, in_h, in_w, out_c, out_h, out_w;
    int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
    int group, has_bias, activation;
    float act_a, act_b;
} g;

void main()
{
    const uint total = uint(g.out_c * g.out_h * g.out_w);
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int in_per_group = g.in_c / g.group, out_per_group = g.out_c / g.group;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
        const int ox = int(i % uint(g.out_w)), oy = int((i / uint(g.out_w)) % uint(g.out_h));
        const int oc = int(i / uint(g.out_w * g.out_h));
        const int fy = oy + g.pad_top, fx = ox + g.pad_left;
        const int ic0 = (oc / out_per_group) * in_per_group;
        float sum = 0.0;
        for (int ic = 0; ic < in_per_group; ++ic) {
            const int wbase = (oc * in_per_group + ic) * g.kernel_h * g.kernel_w;
            const int xbase = (ic0 + ic) * g.in_h * g.in_w;
            for (int ky = 0; ky < g.kernel_h; ++ky) {
                const int ty = fy - ky * g.dilation_h;
                if (ty < 0 || ty % g.stride_h != 0 || ty / g.stride_h >= g.in_h) continue;
                const int iy = ty / g.stride_h;
                for (int kx = 0; kx < g.kernel_w; ++kx) {
                    const int tx = fx - kx * g.dilation_w;
                    if (tx < 0 || tx % g.stride_w != 0 || tx / g.stride_w >= g.in_w) continue;
                    sum += float(x[xbase + iy * g.in_w + tx / g.stride_w]) * w[wbase + ky * g.kernel_w + kx];
                }
            }
        }
        if (g.has_bias != 0) sum += bias[oc];
        y[i] = act_t(activate(g.activation, sum, g.act_a, g.act_b));
    }
}
