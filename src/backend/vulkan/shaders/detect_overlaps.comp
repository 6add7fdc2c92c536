// A detection layer's selection, step 3 (with NMS): for each group, sorted
// row m < n and word w, bit b of mask[m][w] says that candidate k = 32 w + b
// (m < k < n) overlaps candidate m past the threshold: intersection >
// threshold * union, or with `ratio` intersection / union > threshold
// (src/ops/detection/nms.h; the union adds the candidates' areas).
#version 450
#include "detect_common.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Candidates { float c[]; };
layout(std430, binding = 1) readonly buffer Order { int order[]; };
layout(std430, binding = 2) readonly buffer State { int state[]; };
layout(std430, binding = 3) writeonly buffer Mask { uint mask[]; };
layout(push_constant) uniform Params {
    int count, groups, words, ratio;
    float threshold;
} p;

float intersection(int a, int b)
{
    const int oa = a * 8, ob = b * 8;
    if (c[oa] > c[ob + 2] || c[oa + 2] < c[ob] || c[oa + 1] > c[ob + 3] || c[oa + 3] < c[ob + 1]) return 0.0;
    return (min(c[oa + 2], c[ob + 2]) - max(c[oa], c[ob])) * (min(c[oa + 3], c[ob + 3]) - max(c[oa + 1], c[ob + 1]));
}

bool overlaps(int a, int b)
{
    const float inter = intersection(a, b);
    const float uni = c[b * 8 + 5] + c[a * 8 + 5] - inter;
    return p.ratio != 0 ? inter / uni > p.threshold : inter > p.threshold * uni;
}

void main()
{
    const uint per_group = uint(p.count) * uint(p.words), total = uint(p.groups) * per_group;
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint item = gl_GlobalInvocationID.x; item < total; item += stride) {
        const int g = int(item / per_group), m = int(item % per_group) / p.words, w = int(item % per_group) % p.words;
        const int n = state[g * STATE_INTS + N], base = g * order_ints(p.count);
        if (m >= n) continue; // rows NMS never reads
        const int a = order[base + m];
        uint bits = 0u;
        for (int b = 0; b < 32; ++b) {
            const int k = 32 * w + b;
            if (k > m && k < n && overlaps(a, order[base + k])) bits |= 1u << b;
        }
        mask[item] = bits;
    }
}
