// SSD candidates (ncnn's DetectionOutput; src/ops/detection/detection_output.cpp):
// one invocation per foreground class c (1..) and prior j, into slot
// (c - 1) * num_prior + j of 8 floats (see yolo_candidates.comp): the prior's
// box decoded from loc with the prior's variances (or the layer's), the class
// score, the corner area, label c, kept when the score > threshold and the
// prior's background score is below `background_cut` (the CPU's double
// comparison with 1 - threshold, as the float it amounts to).
#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Loc { float loc[]; };
layout(std430, binding = 1) readonly buffer Conf { float conf[]; };
layout(std430, binding = 2) readonly buffer Prior { float prior[]; };
layout(std430, binding = 3) writeonly buffer Candidates { float c[]; };
layout(push_constant) uniform Params {
    int num_prior, num_class, mxnet, prior_variances;
    float background_cut, threshold;
    float variances[4];
} p;

float score_of(int j, int cls) { return p.mxnet != 0 ? conf[cls * p.num_prior + j] : conf[j * p.num_class + cls]; }

void main()
{
    const uint total = uint((p.num_class - 1) * p.num_prior);
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint n = gl_GlobalInvocationID.x; n < total; n += step) {
        const int cls = int(n) / p.num_prior + 1, j = int(n) % p.num_prior;
        const float s = score_of(j, cls);
        const bool decoded = !(score_of(j, 0) >= p.background_cut);
        const int b = 4 * j, v = 4 * p.num_prior + 4 * j;
        const float v0 = p.prior_variances != 0 ? prior[v] : p.variances[0];
        const float v1 = p.prior_variances != 0 ? prior[v + 1] : p.variances[1];
        const float v2 = p.prior_variances != 0 ? prior[v + 2] : p.variances[2];
        const float v3 = p.prior_variances != 0 ? prior[v + 3] : p.variances[3];
        const float pw = prior[b + 2] - prior[b], ph = prior[b + 3] - prior[b + 1];
        const float pcx = (prior[b] + prior[b + 2]) * 0.5, pcy = (prior[b + 1] + prior[b + 3]) * 0.5;
        const float cx = v0 * loc[b] * pw + pcx, cy = v1 * loc[b + 1] * ph + pcy;
        const float bw = exp(v2 * loc[b + 2]) * pw, bh = exp(v3 * loc[b + 3]) * ph;
        const float x0 = cx - bw * 0.5, y0 = cy - bh * 0.5, x1 = cx + bw * 0.5, y1 = cy + bh * 0.5;
        const uint o = n * 8u;
        c[o] = x0;
        c[o + 1] = y0;
        c[o + 2] = x1;
        c[o + 3] = y1;
        c[o + 4] = s;
        c[o + 5] = (x1 - x0) * (y1 - y0);
        c[o + 6] = float(cls);
        c[o + 7] = s > p.threshold && decoded ? 1.0 : 0.0;
    }
}
