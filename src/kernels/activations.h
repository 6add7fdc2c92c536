// Activations mapped over float arrays by one kernel per ISA (the templates
// in activations_map.h): those built on exp, which replace a scalar std::exp
// per value (it dominated networks full of Swish and sigmoid gates), and the
// piecewise ones fused into convolutions (LeakyReLU, Clip, HardSwish), which
// the generic build would run 4 values at a time.
#pragma once
#include <cstdint>
#include <vector>

namespace kestrel {

enum class ExpActivation {
    Exp,     // e^x
    Sigmoid, // 1 / (1 + e^-x), x clamped to +-88.3762626647949 first, as ncnn does
    Swish,   // x / (1 + e^-x)
    Mish,    // x * tanh(ln(1 + e^x)), as x * t / (t + 2) with t = e^x (e^x + 2)
    GeluTanh, // x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), as x * sigmoid(2u)
};

// f(x; a, b), the same bits as the scalar forms (ops/activation/activation.h).
enum class PiecewiseActivation {
    LeakyReLU, // x > 0 ? x : x * a
    Clip,      // min(max(x, a), b)
    HardSwish, // 0 below -b/a, x above (1-b)/a, else x * (x * a + b) (x * a rounded before the add)
};

struct ActivationKernel {
    const char* isa;
    // y[i] = f(x[i]) for i < n; y may be x. Every value takes the same vector
    // code (a tail goes through a padded vector), so it does not depend on its
    // position: splitting the array between threads changes no bit.
    void (*map_exp)(ExpActivation f, const float* x, float* y, int64_t n);
    // The same for the piecewise ones.
    void (*map_piecewise)(PiecewiseActivation f, float a, float b, const float* x, float* y, int64_t n);
    // y[i] = x[i]^(-3/4) as 1 / (sqrt(x) * sqrt(sqrt(x))) (LRN's scale with Caffe's beta).
    void (*map_inverse_three_quarter_power)(const float* x, float* y, int64_t n);
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const ActivationKernel& activation_kernel();
std::vector<const ActivationKernel*> activation_kernels_available();

} // namespace kestrel
