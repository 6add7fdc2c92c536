// A Pooling layer's windows as data, for backends that slide them themselves
// (the Vulkan backend): the kind, each spatial axis's window, and the
// positions an average counts, exactly as the CPU layer computes them.
#pragma once
#include <vector>

#include "kestrel/op.h"
#include "ops/common/sliding_window.h"

namespace kestrel {

struct PoolPlan {
    bool max = true;
    std::vector<window::Axis> axes;     // the last two axes of the input (h, w)
    std::vector<window::Span> counted;  // per axis: the positions an average counts
};

// The 2-D windows `op` (a Pooling layer) slides over the last two axes of `in`,
// every other axis a plane; false when it is no such layer or its windows do
// not fit this form (adaptive windows of varying size, 1-D / 3-D, ONNX's
// Indices output, int8). Adaptive windows that tile the plane evenly are
// plain windows.
bool pooling_plan_2d(const Op& op, const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, PoolPlan& plan);

} // namespace kestrel
