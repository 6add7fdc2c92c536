// A detection layer's selection, last step: each group's selected candidates
// order[0, n). With `rows` (one group): the output table, row k = (label +
// label_offset, score, xmin, ymin, xmax, ymax) of the k-th; otherwise the
// k-th's 8 floats at the group's slot k, kept, and the group's other slots
// not kept (the next selection's candidates).
#version 450
#include "detect_common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Candidates { float c[]; };
layout(std430, binding = 1) readonly buffer Order { int order[]; };
layout(std430, binding = 2) readonly buffer State { int state[]; };
layout(std430, binding = 3) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Params {
    int count, groups, rows;
    float label_offset;
} p;

void main()
{
    const uint total = uint(p.groups) * uint(p.count), stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint item = gl_GlobalInvocationID.x; item < total; item += stride) {
        const int g = int(item) / p.count, k = int(item) % p.count;
        const int n = state[g * STATE_INTS + N];
        const int a = k < n ? order[g * order_ints(p.count) + k] * 8 : 0;
        if (p.rows != 0) {
            if (k >= n) continue;
            const int r = k * 6;
            y[r] = c[a + 6] + p.label_offset;
            y[r + 1] = c[a + 4];
            y[r + 2] = c[a];
            y[r + 3] = c[a + 1];
            y[r + 4] = c[a + 2];
            y[r + 5] = c[a + 3];
        } else {
            const int o = int(item) * 8;
            if (k < n)
                for (int f = 0; f < 7; ++f) y[o + f] = c[a + f];
            y[o + 7] = k < n ? 1.0 : 0.0;
        }
    }
}
