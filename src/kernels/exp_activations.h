// Activations built on exp, mapped over float arrays by one kernel per ISA
// (the template in exp_activations_map.h). They replace a scalar std::exp
// per value, which dominated networks full of Swish (EfficientNet) and
// sigmoid gates.
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

struct ExpActivationKernel {
    const char* isa;
    // y[i] = f(x[i]) for i < n; y may be x. Every value takes the same vector
    // code (a tail goes through a padded vector), so it does not depend on its
    // position: splitting the array between threads changes no bit.
    void (*map)(ExpActivation f, const float* x, float* y, int64_t n);
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const ExpActivationKernel& exp_activation_kernel();
std::vector<const ExpActivationKernel*> exp_activation_kernels_available();

} // namespace kestrel
