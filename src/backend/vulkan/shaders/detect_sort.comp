// A detection layer's selection, step 2: each group's order[0, n) sorted by
// descending score exactly as ncnn's middle-pivot Hoare quicksort orders it
// (src/ops/detection/nms.h; the order of equal scores is that algorithm's),
// one invocation per group, at most `budget` steps per run: the sort's state
// waits in the group's state for the next run (lavapipe ends loops past 65535
// iterations of an invocation), and the host runs this until every group is
// SORTED. Ranges left to sort wait on a stack after the order; they are
// disjoint, so the order they are taken in does not change the result. Once
// sorted, n is cut to top_k (top_k >= 0).
#version 450
#include "detect_common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Candidates { float c[]; };
layout(std430, binding = 1) buffer Order { int order[]; };
layout(std430, binding = 2) buffer State { int state[]; };
layout(push_constant) uniform Params { int count, groups, top_k, budget; } p;

int base;

float score(int k) { return c[order[base + k] * 8 + 4]; }

void main()
{
    const int g = int(gl_GlobalInvocationID.x);
    if (g >= p.groups) return;
    const int s = g * STATE_INTS;
    int phase = state[s + PHASE];
    if (phase == SORTED) return;
    base = g * order_ints(p.count);
    const int stack = base + p.count;
    int top = state[s + TOP], lo = state[s + LO], hi = state[s + HI], i = state[s + I], j = state[s + J];
    float pivot = intBitsToFloat(state[s + PIVOT]);
    for (int step = 0; step < p.budget && phase != SORTED; ++step) {
        if (phase == POP) {
            if (top == 0) {
                phase = SORTED;
            } else {
                top -= 2;
                lo = order[stack + top];
                hi = order[stack + top + 1];
                phase = RANGE;
            }
        } else if (phase == RANGE) {
            if (lo < hi) {
                pivot = score((lo + hi) / 2);
                i = lo;
                j = hi;
                phase = SCAN_I;
            } else {
                phase = POP;
            }
        } else if (phase == SCAN_I) {
            if (i <= hi && score(i) > pivot) ++i;
            else phase = SCAN_J;
        } else if (phase == SCAN_J) {
            if (j >= lo && score(j) < pivot) --j;
            else phase = SWAP;
        } else { // SWAP
            if (i <= j) {
                const int t = order[base + i];
                order[base + i] = order[base + j];
                order[base + j] = t;
                ++i;
                --j;
            }
            if (i <= j) {
                phase = SCAN_I;
            } else {
                // [lo, j] waits on the stack; [i, hi] goes on.
                if (lo < j) {
                    order[stack + top] = lo;
                    order[stack + top + 1] = j;
                    top += 2;
                }
                lo = i;
                phase = RANGE;
            }
        }
    }
    state[s + PHASE] = phase;
    state[s + TOP] = top;
    state[s + LO] = lo;
    state[s + HI] = hi;
    state[s + I] = i;
    state[s + J] = j;
    state[s + PIVOT] = floatBitsToInt(pivot);
    if (phase == SORTED && p.top_k >= 0) state[s + N] = min(state[s + N], p.top_k);
}
