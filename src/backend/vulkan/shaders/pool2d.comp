// 2-D pooling over the CPU layer's windows (ops/pool/pool_plan.h): one output
// value per invocation; max over the window's positions inside the plane
// (-FLT_MAX when none), or the sum of those divided by the taps inside the
// counted span (0 when none).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Windows {
    int planes, in_h, in_w, out_h, out_w, is_max;
    int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
    int count_y0, count_y1, count_x0, count_x1;
} g;

void main()
{
    uint total = uint(g.planes * g.out_h * g.out_w);
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
        int ox = int(i % uint(g.out_w));
        int oy = int((i / uint(g.out_w)) % uint(g.out_h));
        int plane = int(i / uint(g.out_w * g.out_h));
        int base = plane * g.in_h * g.in_w;
        float best = -3.402823466e+38, sum = 0.0;
        int area = 0;
        for (int ky = 0; ky < g.kernel_h; ++ky) {
            int iy = oy * g.stride_h - g.pad_top + ky * g.dilation_h;
            for (int kx = 0; kx < g.kernel_w; ++kx) {
                int ix = ox * g.stride_w - g.pad_left + kx * g.dilation_w;
                if (iy >= g.count_y0 && iy < g.count_y1 && ix >= g.count_x0 && ix < g.count_x1) ++area;
                if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
                float v = float(x[base + iy * g.in_w + ix]);
                best = max(best, v);
                sum += v;
            }
        }
        y[i] = act_t(g.is_max != 0 ? best : (area > 0 ? sum / float(area) : 0.0));
    }
}
