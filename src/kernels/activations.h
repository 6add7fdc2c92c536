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
    // LRN across channels with Caffe's beta of 3/4, one output plane:
    //   y[i] = x[i] * (bias + alpha * sum over k < count of planes[k][i]^2)^(-3/4),
    // the power as 1 / (sqrt(b) * sqrt(sqrt(b))). y must not be one of the planes.
    void (*lrn_across_channels)(const float* const* planes, int count, const float* x, float bias, float alpha,
                                float* y, int64_t n);
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const ActivationKernel& activation_kernel();
std::vector<const ActivationKernel*> activation_kernels_available();

} // namespace kestrel
