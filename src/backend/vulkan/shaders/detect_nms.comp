// A detection layer's selection, step 4 (with NMS): greedy NMS over each
// group's sorted order[0, n), one workgroup per group: row m is kept unless a
// kept row before it removed it, and a kept row removes the later rows its
// mask row marks (detect_overlaps.comp). The kept ones are compacted at the
// front of the order; at most `rows` rows per run (the walk waits in the
// state: lavapipe ends loops past 65535 iterations of an invocation), and
// when the walk ends, n becomes the number kept. `removed` holds each group's
// removed bits between runs.
#version 450
#include "detect_common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) buffer Order { int order[]; };
layout(std430, binding = 1) buffer State { int state[]; };
layout(std430, binding = 2) readonly buffer Mask { uint mask[]; };
layout(std430, binding = 3) buffer Removed { uint removed[]; };
layout(push_constant) uniform Params { int count, groups, words, rows; } p;

const int MAX_WORDS = 2048; // the host takes at most this many words per row
shared uint gone[MAX_WORDS];

void main()
{
    const int t = int(gl_LocalInvocationID.x);
    for (int g = int(gl_WorkGroupID.x); g < p.groups; g += int(gl_NumWorkGroups.x)) {
        const int s = g * STATE_INTS, n = state[s + N], first = state[s + ROW];
        if (first >= n) continue; // done, or nothing to walk (uniform: every thread reads the same)
        const int base = g * order_ints(p.count), words = p.words;
        for (int w = t; w < words; w += 64) gone[w] = first == 0 ? 0u : removed[g * words + w];
        memoryBarrierShared();
        barrier();
        const int last = min(n, first + p.rows);
        int kept = state[s + KEPT];
        for (int m = first; m < last; ++m) {
            if (((gone[m >> 5] >> (m & 31)) & 1u) == 0u) {
                const int row = (g * p.count + m) * words;
                for (int w = (m + 1) / 32 + t; w < words; w += 64) gone[w] |= mask[row + w];
                if (t == 0) order[base + kept] = order[base + m];
                ++kept;
            }
            memoryBarrierShared();
            barrier();
        }
        for (int w = t; w < words; w += 64) removed[g * words + w] = gone[w];
        barrier(); // every thread has read the state before it changes
        if (t == 0) {
            state[s + KEPT] = kept;
            if (last == n) {
                state[s + N] = kept;
                state[s + ROW] = NMS_DONE;
            } else {
                state[s + ROW] = last;
            }
        }
    }
}
