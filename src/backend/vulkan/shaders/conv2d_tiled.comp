// 2-D convolution in tiles: each invocation computes 4 output channels at 4
// consecutive output columns of one row, so an input value serves 4 channels
// and a weight vector 4 columns. Same sum order as conv2d.comp (channel, row,
// column), then bias, residual, activation. Weights packed by the host as
// vec4 over blocks of 4 output channels (all 4 within one group; channels past
// out_c are zero): w[(block * in_per_group + ic) * kh * kw + tap].
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) readonly buffer W { vec4 w[]; };
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
    const int columns = (g.out_w + 3) / 4, blocks = (g.out_c + 3) / 4;
    const uint total = uint(blocks * g.out_h * columns);
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int in_per_group = g.in_c / g.group, out_per_group = g.out_c / g.group;
    const int taps = g.kernel_h * g.kernel_w;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
        const int ox0 = int(i % uint(columns)) * 4;
        const int oy = int((i / uint(columns)) % uint(g.out_h));
        const int block = int(i / uint(columns * g.out_h));
        const int ic0 = (block * 4 / out_per_group) * in_per_group;
        vec4 sum[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
        for (int ic = 0; ic < in_per_group; ++ic) {
            const int wbase = (block * in_per_group + ic) * taps;
            const int xbase = (ic0 + ic) * g.in_h * g.in_w;
            for (int ky = 0; ky < g.kernel_h; ++ky) {
                const int iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
                const bool row_inside = iy >= 0 && iy < g.in_h;
                for (int kx = 0; kx < g.kernel_w; ++kx) {
                    const vec4 wv = w[wbase + ky * g.kernel_w + kx];
                    for (int k = 0; k < 4; ++k) {
                        const int ix = (ox0 + k) * g.stride_w - g.pad_left + kx * g.dilation_w;
                        const bool inside = row_inside && ix >= 0 && ix < g.in_w;
                        sum[k] += (inside ? float(x[xbase + iy * g.in_w + ix]) : g.pad_value) * wv;
                    }
                }
            }
        }
        for (int j = 0; j < 4; ++j) {
            const int oc = block * 4 + j;
            if (oc >= g.out_c) break;
            for (int k = 0; k < 4 && ox0 + k < g.out_w; ++k) {
                const int at = (oc * g.out_h + oy) * g.out_w + ox0 + k;
                float v = sum[k][j];
                if (g.has_bias != 0) v += bias[oc];
                if (g.has_residual != 0) v += float(residual[at]);
                y[at] = act_t(activate(g.activation, v, g.act_a, g.act_b));
            }
        }
    }
}
