// LRN (ncnn's): y = x * (bias + alpha / n * sum of x^2 over the window)^-beta,
// the window across channels [q - size/2, q + size/2] clipped to the tensor
// (n = size), or within the channel a size x size square from size/2 before
// the position, clipped to the plane (n = size^2). x as (c, h, w).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Params {
    int c, h, w, within, size;
    float alpha_div, beta, bias;
} p;

void main()
{
    const uint plane = uint(p.h * p.w), count = uint(p.c) * plane;
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int half_size = p.size / 2;
    for (uint i = gl_GlobalInvocationID.x; i < count; i += step) {
        const int q = int(i / plane), at = int(i % plane), row = at / p.w, col = at % p.w;
        float sum = 0.0;
        if (p.within == 0) {
            for (int k = max(q - half_size, 0); k <= min(q + half_size, p.c - 1); ++k) {
                const float v = float(x[uint(k) * plane + uint(at)]);
                sum += v * v;
            }
        } else {
            for (int dy = 0; dy < p.size; ++dy) {
                const int r = row - half_size + dy;
                if (r < 0 || r >= p.h) continue;
                for (int dx = 0; dx < p.size; ++dx) {
                    const int cc = col - half_size + dx;
                    if (cc < 0 || cc >= p.w) continue;
                    const float v = float(x[uint(q) * plane + uint(r * p.w + cc)]);
                    sum += v * v;
                }
            }
        }
        y[i] = act_t(float(x[i]) * pow(p.bias + p.alpha_div * sum, -p.beta));
    }
}
