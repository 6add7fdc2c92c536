// One-input maps in place of their CPU layers: ncnn's UnaryOp table (op
// 0..27), HardSigmoid (44), GELU (47 tanh form, 48), and the activations
// layers fuse (100 + Activation::Type), with params a and b.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "common.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { act_t x[]; };
layout(std430, binding = 1) writeonly buffer Y { act_t y[]; };
layout(push_constant) uniform Params {
    int op;
    uint numel;
    float a;
    float b;
} p;

// erf to 1.5e-7 (Abramowitz and Stegun 7.1.26).
float erf_of(float v)
{
    float t = 1.0 / (1.0 + 0.3275911 * abs(v));
    float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return sign(v) * (1.0 - poly * exp(-v * v));
}

float apply(float v)
{
    switch (p.op) {
    case 0: return abs(v);
    case 1: return -v;
    case 2: return floor(v);
    case 3: return ceil(v);
    case 4: return v * v;
    case 5: return sqrt_of(v);
    case 6: return v < 0.0 ? NAN_VALUE : v == 0.0 ? INF_VALUE : inversesqrt(v);
    case 7: return exp(v);
    case 8: return log_of(v);
    case 9: return sin(v);
    case 10: return cos(v);
    case 11: return tan(v);
    // asin and acos through atan: GLSL's own are far less precise on some devices.
    case 12: return abs(v) > 1.0 ? NAN_VALUE : atan(v, sqrt((1.0 - v) * (1.0 + v)));
    case 13: return abs(v) > 1.0 ? NAN_VALUE : atan(sqrt((1.0 - v) * (1.0 + v)), v);
    case 14: return atan(v);
    case 15: return 1.0 / v;
    case 16: return tanh_of(v);
    case 17: return log_of(v) * 0.4342944819032518;
    case 18: return roundEven(v);
    case 19: return trunc(v);
    case 20: return sign(v);
    case 21: return abs(v) < 1e-5 ? v + 0.5 * v * v : exp(v) - 1.0; // expm1
    case 22: return sinh(v);
    case 23: return asinh(v);
    case 24: return cosh(v);
    case 25: return v < 1.0 ? NAN_VALUE : acosh(v);
    case 26: return abs(v) > 1.0 ? NAN_VALUE : atanh(v);
    case 27: return abs(v) < 1e-4 ? v - 0.5 * v * v : log_of(1.0 + v); // log1p
    case 44: return clamp(v * p.a + p.b, 0.0, 1.0);                      // HardSigmoid
    case 47: return 0.5 * v * (1.0 + tanh_of(0.7978845608 * (v + 0.044715 * v * v * v))); // GELU, tanh form
    case 48: return 0.5 * v * (1.0 + erf_of(v * 0.7071067811865476));   // GELU
    default: return activate(p.op - 100, v, p.a, p.b);                   // 100 + Activation::Type
    }
}

void main()
{
    uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) y[i] = act_t(apply(float(x[i])));
}
