// YOLO candidates of one input grid (src/ops/detection/yolo.h): one
// invocation per box and cell, box-major then row-major (the CPU's candidate
// order), into slot first + (b * h + i) * w + j of 8 floats: xmin, ymin, xmax,
// ymax, score, area, label, kept (1 when score >= threshold). The score is
// YOLOv3's 1 / (1 + e^-obj * (1 + e^-cls)) over the largest logit cls, or with
// `softmax` YOLOv2's sigmoid(obj) times the largest class probability; the
// area is the decoded w * h (v3) or the corners' (`corner_area`, v2).
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Candidates { float c[]; };
layout(push_constant) uniform Params {
    int h, w, num_class, num_box, first, softmax, corner_area;
    float size_w, size_h, threshold;
    float anchors[16]; // (w, h) per box
} p;

const float FLT_MAX = 3.402823466e+38;

float sigmoid_of(float v) { return 1.0 / (1.0 + exp(-v)); }

void main()
{
    const int plane = p.h * p.w, per_box = 5 + p.num_class;
    const uint total = uint(p.num_box * plane);
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint n = gl_GlobalInvocationID.x; n < total; n += step) {
        const int b = int(n) / plane, at = int(n) % plane, i = at / p.w, j = at % p.w;
        const int ch = b * per_box * plane;
        int label = 0;
        float confidence;
        const float obj = x[ch + 4 * plane + at];
        if (p.softmax != 0) {
            float mx = -1.0 / 0.0, sum = 0.0, best = 0.0;
            for (int q = 0; q < p.num_class; ++q) mx = max(mx, x[ch + (5 + q) * plane + at]);
            for (int q = 0; q < p.num_class; ++q) sum += exp(x[ch + (5 + q) * plane + at] - mx);
            for (int q = 0; q < p.num_class; ++q) {
                const float pq = exp(x[ch + (5 + q) * plane + at] - mx) / sum;
                if (pq > best) {
                    label = q;
                    best = pq;
                }
            }
            confidence = sigmoid_of(obj) * best;
        } else {
            float cls = -FLT_MAX;
            for (int q = 0; q < p.num_class; ++q) {
                const float v = x[ch + (5 + q) * plane + at];
                if (v > cls) {
                    label = q;
                    cls = v;
                }
            }
            confidence = 1.0 / (1.0 + exp(-obj) * (1.0 + exp(-cls)));
        }
        const float cx = (float(j) + sigmoid_of(x[ch + at])) / float(p.w);
        const float cy = (float(i) + sigmoid_of(x[ch + plane + at])) / float(p.h);
        const float bw = exp(x[ch + 2 * plane + at]) * p.anchors[2 * b] / p.size_w;
        const float bh = exp(x[ch + 3 * plane + at]) * p.anchors[2 * b + 1] / p.size_h;
        const float x0 = cx - bw * 0.5, y0 = cy - bh * 0.5, x1 = cx + bw * 0.5, y1 = cy + bh * 0.5;
        const uint o = uint(p.first + int(n)) * 8u;
        c[o + 0] = x0;
        c[o + 1] = y0;
        c[o + 2] = x1;
        c[o + 3] = y1;
        c[o + 4] = confidence;
        c[o + 5] = p.corner_area != 0 ? (x1 - x0) * (y1 - y0) : bw * bh;
        c[o + 6] = float(label);
        c[o + 7] = confidence >= p.threshold ? 1.0 : 0.0;
    }
}
