// Batched strided matrix product: y[b](m, n) = alpha * (sum over k of
// A[b](m, k) * B[b](k, n) + beta * C[b](m, n)), every operand addressed by
// an offset and (batch, row, column) strides (0 where it repeats; C optional), so one
// shader serves Gemm's transposes and broadcasts of C and attention's heads
// (a head is a batch whose rows and columns are strided views). Each
// invocation computes 4 x 4 outputs (rows m0.., columns n0..), summing over
// k in order.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { act_t a[]; };
layout(std430, binding = 1) readonly buffer B { act_t b[]; };
layout(std430, binding = 2) readonly buffer C { act_t c[]; };
layout(std430, binding = 3) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Params {
    int batch, M, N, K;
    int a_b, a_r, a_c, b_b, b_r, b_c, c_b, c_r, c_c, y_b, y_r, y_c;
    int a_o, b_o, c_o, y_o;
    int has_c;
    float alpha, beta;
} p;

void main()
{
    const int row_tiles = (p.M + 3) / 4, col_tiles = (p.N + 3) / 4;
    const uint total = uint(p.batch * row_tiles * col_tiles);
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += step) {
        const int n0 = int(i % uint(col_tiles)) * 4, m0 = int((i / uint(col_tiles)) % uint(row_tiles)) * 4;
        const int bi = int(i / uint(col_tiles * row_tiles));
        // Rows and columns past the edge read row / column 0 and are not written.
        int ar[4], bc[4];
        for (int t = 0; t < 4; ++t) {
            ar[t] = p.a_o + bi * p.a_b + (m0 + t < p.M ? m0 + t : 0) * p.a_r;
            bc[t] = p.b_o + bi * p.b_b + (n0 + t < p.N ? n0 + t : 0) * p.b_c;
        }
        vec4 sum[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
        for (int k = 0; k < p.K; ++k) {
            const vec4 bv = vec4(float(b[bc[0] + k * p.b_r]), float(b[bc[1] + k * p.b_r]),
                                 float(b[bc[2] + k * p.b_r]), float(b[bc[3] + k * p.b_r]));
            for (int t = 0; t < 4; ++t) sum[t] += float(a[ar[t] + k * p.a_c]) * bv;
        }
        for (int t = 0; t < 4 && m0 + t < p.M; ++t)
            for (int u = 0; u < 4 && n0 + u < p.N; ++u) {
                float v = sum[t][u];
                if (p.has_c != 0) v += p.beta * float(c[p.c_o + bi * p.c_b + (m0 + t) * p.c_r + (n0 + u) * p.c_c]);
                y[p.y_o + bi * p.y_b + (m0 + t) * p.y_r + (n0 + u) * p.y_c] = act_t(p.alpha * v);
            }
    }
}
