// Functions the shaders share: C's results where GLSL leaves them undefined,
// and the activations that layers fuse (ncnn's activation_type, params a, b).
#define NAN_VALUE uintBitsToFloat(0x7fc00000u)
#define INF_VALUE uintBitsToFloat(0x7f800000u)

// GLSL leaves log and sqrt of negatives undefined: C's NaN and -inf here.
float log_of(float v) { return v < 0.0 ? NAN_VALUE : v == 0.0 ? -INF_VALUE : log(v); }
float sqrt_of(float v) { return v < 0.0 ? NAN_VALUE : sqrt(v); }
float tanh_of(float v) { return tanh(clamp(v, -15.0, 15.0)); } // exp past float's range gives NaN on some devices
float sigmoid_of(float v) { return 1.0 / (1.0 + exp(-clamp(v, -88.3762626647949, 88.3762626647949))); }
float mish_of(float v) { return v * tanh_of(v > 20.0 ? v : log(1.0 + exp(v))); }

// Activation::Type (src/ops/activation/activation.h): 0 none, 1 ReLU, 2
// LeakyReLU (a), 3 Clip (a, b), 4 Sigmoid, 5 Mish, 6 HardSwish (a, b), 7 Swish.
float activate(int type, float v, float a, float b)
{
    switch (type) {
    case 1: return max(v, 0.0);
    case 2: return v > 0.0 ? v : v * a;
    case 3: return min(max(v, a), b);
    case 4: return sigmoid_of(v);
    case 5: return mish_of(v);
    case 6: return v * clamp(v * a + b, 0.0, 1.0);
    case 7: return v * sigmoid_of(v);
    default: return v;
    }
}
