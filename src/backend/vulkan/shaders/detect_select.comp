// The selection of the detection layers (src/ops/detection/nms.h), one
// invocation per group g of `count` candidates (8 floats each: xmin, ymin,
// xmax, ymax, score, area, label, kept; see yolo_candidates.comp): the kept
// ones in their order, sorted by descending score as ncnn's middle-pivot Hoare
// quicksort orders them (ties included), the first top_k (top_k >= 0), then
// with `nms` greedy NMS against the boxes kept so far (intersection >
// threshold * union, or with `ratio` intersection / union > threshold,
// suppresses). With `rows` (one group): y[0] = the count n, then n rows
// (label + label_offset, score, xmin, ymin, xmax, ymax); otherwise the
// selected candidates in order at the group's slots of y, the rest unkept.
#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) readonly buffer Candidates { float c[]; };
layout(std430, binding = 1) buffer Order { int order[]; }; // per group 3 * count + 2 ints: the order, then the sort's stack
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Params {
    int count, groups, top_k, nms, ratio, rows;
    float threshold, label_offset;
} p;

int base; // the group's first slot in `order`

float score(int k) { return c[order[base + k] * 8 + 4]; }

void swap_at(int a, int b)
{
    const int t = order[base + a];
    order[base + a] = order[base + b];
    order[base + b] = t;
}

float intersection(int a, int b)
{
    const int oa = a * 8, ob = b * 8;
    if (c[oa] > c[ob + 2] || c[oa + 2] < c[ob] || c[oa + 1] > c[ob + 3] || c[oa + 3] < c[ob + 1]) return 0.0;
    return (min(c[oa + 2], c[ob + 2]) - max(c[oa], c[ob])) * (min(c[oa + 3], c[ob + 3]) - max(c[oa + 1], c[ob + 1]));
}

// Sorts order[base, base + n) by descending score; ranges wait on a stack
// after them (disjoint ranges may be sorted in any order: the result is the same).
void sort_like_ncnn(int n)
{
    const int stack = base + p.count;
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
}

// Greedy NMS over the sorted order[base, base + n): the kept ones compacted at
// the front; returns their count.
int nms(int n)
{
    int kept = 0;
    for (int k = 0; k < n; ++k) {
        const int a = order[base + k];
        bool keep = true;
        for (int m = 0; m < kept && keep; ++m) {
            const int b = order[base + m];
            const float inter = intersection(a, b);
            const float uni = c[a * 8 + 5] + c[b * 8 + 5] - inter;
            keep = !(p.ratio != 0 ? inter / uni > p.threshold : inter > p.threshold * uni);
        }
        if (keep) order[base + kept++] = a;
    }
    return kept;
}

void main()
{
    const int g = int(gl_GlobalInvocationID.x);
    if (g >= p.groups) return;
    base = g * (3 * p.count + 2);
    int n = 0;
    for (int k = g * p.count; k < (g + 1) * p.count; ++k)
        if (c[k * 8 + 7] != 0.0) order[base + n++] = k;
    sort_like_ncnn(n);
    if (p.top_k >= 0) n = min(n, p.top_k);
    if (p.nms != 0) n = nms(n);
    if (p.rows != 0) {
        y[0] = float(n);
        for (int k = 0; k < n; ++k) {
            const int a = order[base + k] * 8, r = 1 + k * 6;
            y[r] = c[a + 6] + p.label_offset;
            y[r + 1] = c[a + 4];
            y[r + 2] = c[a];
            y[r + 3] = c[a + 1];
            y[r + 4] = c[a + 2];
            y[r + 5] = c[a + 3];
        }
        return;
    }
    for (int k = 0; k < p.count; ++k) {
        const int o = (g * p.count + k) * 8;
        if (k >= n) {
            y[o + 7] = 0.0;
            continue;
        }
        const int a = order[base + k] * 8;
        for (int f = 0; f < 7; ++f) y[o + f] = c[a + f];
        y[o + 7] = 1.0;
    }
}
