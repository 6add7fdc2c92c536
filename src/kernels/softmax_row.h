// Softmax along one contiguous row, y = exp(x - max) / sum: the Softmax op's
// lanes along the last axis and the attention kernel's score rows.
#pragma once
#include <algorithm>
#include <cfloat>
#include <cstdint>

#include "kernels/activations.h"

namespace kestrel {

// y may alias x: every x[i] is read before y[i] is written, and never after.
inline void softmax_row(const float* x, float* y, int64_t n)
{
    float mx = -FLT_MAX;
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, x[i]);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] - mx;
    activation_kernel().map_exp(ExpActivation::Exp, y, y, n);
    float sum = 0.f;
    for (int64_t i = 0; i < n; ++i) sum += y[i];
    for (int64_t i = 0; i < n; ++i) y[i] /= sum;
}

} // namespace kestrel
