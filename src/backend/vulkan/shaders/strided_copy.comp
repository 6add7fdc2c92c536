// A strided copy of 32-bit words (ops/common/element_moves.h): for every
// index i within dims (row-major over `count` items), y[out_offset + i .
// out_strides] = x[in_offset + i . in_strides]. Strides may be 0 or negative;
// a fill is a copy from a one-value buffer with in_strides 0.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { word_t x[]; };
layout(std430, binding = 1) writeonly buffer Y { word_t y[]; };
layout(push_constant) uniform Params {
    int rank;
    uint count;
    int in_offset;
    int out_offset;
    uint dims[6];
    int in_strides[6];
    int out_strides[6];
} p;

void main()
{
    const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.count; i += step) {
        uint rem = i;
        int src = p.in_offset, dst = p.out_offset;
        for (int k = p.rank - 1; k >= 0; --k) {
            const int c = int(rem % p.dims[k]);
            rem /= p.dims[k];
            src += c * p.in_strides[k];
            dst += c * p.out_strides[k];
        }
        y[dst] = x[src];
    }
}
