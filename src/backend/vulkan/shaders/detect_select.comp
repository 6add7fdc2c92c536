// The selection of a detection layer (src/ops/detection/nms.h), one
// invocation: the kept candidates (8 floats each, see yolo_candidates.comp)
// in their order, sorted by descending score as ncnn's middle-pivot Hoare
// quicksort orders them (ties included), then greedy NMS against the boxes
// kept so far (intersection > threshold * union, or with `ratio`
// intersection / union > threshold, suppresses). y[0] = the count n, then n
// rows (label + label_offset, score, xmin, ymin, xmax, ymax).
#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) readonly buffer Candidates { float c[]; };
layout(std430, binding = 1) buffer Order { int order[]; }; // 2 * count ints: the sorted order, then the quicksort's stack
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Params {
    int count, ratio;
    float threshold, label_offset;
} p;

float score(int k) { return c[order[k] * 8 + 4]; }

void swap_at(int a, int b)
{
    const int t = order[a];
    order[a] = order[b];
    order[b] = t;
}

float intersection(int a, int b)
{
    const int oa = a * 8, ob = b * 8;
    if (c[oa] > c[ob + 2] || c[oa + 2] < c[ob] || c[oa + 1] > c[ob + 3] || c[oa + 3] < c[ob + 1]) return 0.0;
    return (min(c[oa + 2], c[ob + 2]) - max(c[oa], c[ob])) * (min(c[oa + 3], c[ob + 3]) - max(c[oa + 1], c[ob + 1]));
}

void main()
{
    int n = 0;
    for (int k = 0; k < p.count; ++k)
        if (c[k * 8 + 7] != 0.0) order[n++] = k;
    // Quicksort on ranges kept on a stack after the order (disjoint ranges
    // may be sorted in any order: the result is the same).
    const int stack = p.count;
    int top = 0;
    if (n > 1) {
        order[stack] = 0;
        order[stack + 1] = n - 1;
        top = 2;
    }
    while (top > 0) {
        int lo = order[stack + top - 2], hi = order[stack + top - 1];
        top -= 2;
        while (lo < hi) {
            const float pivot = score((lo + hi) / 2);
            int i = lo, j = hi;
            while (i <= j) {
                while (i <= hi && score(i) > pivot) ++i;
                while (j >= lo && score(j) < pivot) --j;
                if (i <= j) {
                    swap_at(i, j);
                    ++i;
                    --j;
                }
            }
            if (lo < j) {
                order[stack + top] = lo;
                order[stack + top + 1] = j;
                top += 2;
            }
            lo = i;
        }
    }
    // Greedy NMS: the kept ones compacted at the front of the order.
    int kept = 0;
    for (int k = 0; k < n; ++k) {
        const int a = order[k];
        bool keep = true;
        for (int m = 0; m < kept && keep; ++m) {
            const int b = order[m];
            const float inter = intersection(a, b);
            const float uni = c[a * 8 + 5] + c[b * 8 + 5] - inter;
            keep = !(p.ratio != 0 ? inter / uni > p.threshold : inter > p.threshold * uni);
        }
        if (keep) order[kept++] = a;
    }
    y[0] = float(kept);
    for (int k = 0; k < kept; ++k) {
        const int a = order[k] * 8, r = 1 + k * 6;
        y[r] = c[a + 6] + p.label_offset;
        y[r + 1] = c[a + 4];
        y[r + 2] = c[a];
        y[r + 3] = c[a + 1];
        y[r + 4] = c[a + 2];
        y[r + 5] = c[a + 3];
    }
}
