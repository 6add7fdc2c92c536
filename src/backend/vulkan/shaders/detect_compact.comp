// A detection layer's selection, step 1 (ops/detection.cpp): per group g of
// `count` candidate slots (8 floats each, see yolo_candidates.comp), the
// slots whose kept flag is set, in slot order, at the front of the group's
// order, their number n in the group's state, and the sort started on [0, n).
// One workgroup per group: each thread counts a run of slots, the runs'
// places follow from the counts before them.
#version 450
#include "detect_common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Candidates { float c[]; };
layout(std430, binding = 1) writeonly buffer Order { int order[]; };
layout(std430, binding = 2) writeonly buffer State { int state[]; };
layout(push_constant) uniform Params { int count, groups; } p;

shared int first[64];

void main()
{
    const int t = int(gl_LocalInvocationID.x), run = (p.count + 63) / 64;
    for (int g = int(gl_WorkGroupID.x); g < p.groups; g += int(gl_NumWorkGroups.x)) {
        const int begin = g * p.count + min(t * run, p.count), end = g * p.count + min((t + 1) * run, p.count);
        int kept = 0;
        for (int k = begin; k < end; ++k)
            if (c[k * 8 + 7] != 0.0) ++kept;
        first[t] = kept;
        memoryBarrierShared();
        barrier();
        if (t == 0) {
            int n = 0;
            for (int q = 0; q < 64; ++q) {
                const int v = first[q];
                first[q] = n;
                n += v;
            }
            const int s = g * STATE_INTS;
            state[s + N] = n;
            state[s + PHASE] = RANGE;
            state[s + TOP] = 0;
            state[s + LO] = 0;
            state[s + HI] = n - 1;
            state[s + ROW] = 0;
            state[s + KEPT] = 0;
        }
        memoryBarrierShared();
        barrier();
        int at = g * order_ints(p.count) + first[t];
        for (int k = begin; k < end; ++k)
            if (c[k * 8 + 7] != 0.0) order[at++] = k;
        barrier(); // `first` is rewritten for the next group
    }
}
