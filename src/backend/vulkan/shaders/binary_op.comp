// BinaryOp over the broadcast engine's plan (kernels/broadcast.h): the output
// walked in row-major order over the plan's merged dims, each input read at
// its own strides (0 along broadcast axes). Ops 0..18 are ncnn's op_type
// codes; 19.. ONNX's forms (src/backend/vulkan/ops/binary_op.cpp maps them).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer A { act_t a[]; };
layout(std430, binding = 1) readonly buffer B { act_t b[]; };
layout(std430, binding = 2) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Plan {
    int op;
    uint rank;
    uint numel;
    uint unused;
    uint dims[8];
    uint stride_a[8];
    uint stride_b[8];
} plan;

float nan_value() { return uintBitsToFloat(0x7fc00000u); }

float pow_of(float x, float e)
{
    if (e == 0.0) return 1.0;
    if (x == 0.0) return e > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
    if (x > 0.0) return pow(x, e);
    if (e != trunc(e)) return nan_value();
    float r = pow(-x, e);
    return mod(e, 2.0) == 1.0 ? -r : r;
}

float atan2_of(float y_, float x) { return (x == 0.0 && y_ == 0.0) ? 0.0 : atan(y_, x); }

// x - q * d without rounding the product (Dekker's split product: Vulkan's
// fma need not be fused), as C's fmod and remainder have it.
float residual(float x, float q, float d)
{
    precise float p = q * d;
    precise float cq = 4097.0 * q;
    precise float qh = cq - (cq - q);
    precise float ql = q - qh;
    precise float cd = 4097.0 * d;
    precise float dh = cd - (cd - d);
    precise float dl = d - dh;
    precise float err = ((qh * dh - p) + qh * dl + ql * dh) + ql * dl;
    precise float r = (x - p) - err;
    return r;
}

// x / d refined by one residual step: Vulkan allows division 2.5 ulp off.
float quotient(float x, float d)
{
    precise float q = x / d;
    return q + residual(x, q, d) / d;
}

// C's fmod: x - d * trunc(x / d), the quotient's integer made exact.
float fmod_of(float x, float d)
{
    if (d == 0.0) return nan_value();
    float q = trunc(quotient(x, d));
    float r = residual(x, q, d);
    if (r != 0.0 && (r < 0.0) != (x < 0.0)) r = residual(x, q - sign(x) * sign(d), d); // the quotient overshot
    else if (abs(r) >= abs(d)) r = residual(x, q + sign(x) * sign(d), d);              // or fell short
    return r;
}

// IEEE remainder: x - d * (x / d rounded half to even).
float remainder_of(float x, float d) { return d == 0.0 ? nan_value() : residual(x, roundEven(quotient(x, d)), d); }

float apply(int op, float x, float z)
{
    switch (op) {
    case 0: return x + z;
    case 1: return x - z;
    case 2: return x * z;
    case 3: return x / z;
    case 4: return x < z ? z : x;
    case 5: return z < x ? z : x;
    case 6: return pow_of(x, z);
    case 7: return z - x;
    case 8: return z / x;
    case 9: return pow_of(z, x);
    case 10: return atan2_of(x, z);
    case 11: return atan2_of(z, x);
    case 12: return fmod_of(x, z);
    case 13: return fmod_of(z, x);
    case 14: {
        float hi = max(x, z), lo = min(x, z);
        return hi + log(1.0 + exp(lo - hi));
    }
    case 15: return floor(quotient(x, z));
    case 16: return floor(quotient(z, x));
    case 17: return remainder_of(x, z);
    case 18: return remainder_of(z, x);
    // ONNX's forms (BinaryOp 21=1): Max / Min propagating NaN, PRelu, Python's Mod.
    case 19: return isnan(x) || isnan(z) ? nan_value() : max(x, z);
    case 20: return isnan(x) || isnan(z) ? nan_value() : min(x, z);
    case 21: return x < 0.0 ? x * z : x;
    default: {
        float r = fmod_of(x, z);
        return (r != 0.0 && ((r < 0.0) != (z < 0.0))) ? r + z : r;
    }
    }
}

void main()
{
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < plan.numel; i += step) {
        uint rest = i, oa = 0u, ob = 0u;
        for (int k = int(plan.rank) - 1; k >= 0; --k) {
            uint c = rest % plan.dims[k];
            rest /= plan.dims[k];
            oa += c * plan.stride_a[k];
            ob += c * plan.stride_b[k];
        }
        y[i] = act_t(apply(plan.op, float(a[oa]), float(b[ob])));
    }
}
