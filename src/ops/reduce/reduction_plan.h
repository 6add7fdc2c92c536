// A Reduction layer's fold as data, for backends that fold groups
// themselves (the Vulkan backend): the operation, the reduced axes and the
// final conventions of the layer's form (see reduction.cpp).
#pragma once
#include <vector>

#include "kestrel/op.h"

namespace kestrel {

struct ReductionPlan {
    // 0 SUM, 1 ASUM, 2 SUMSQ, 3 MEAN, 4 MAX, 5 MIN, 6 PROD, 7 L1, 8 L2,
    // 9 LOGSUM, 10 LOGSUMEXP (ASUM as L1 in ONNX's form).
    int op = 0;
    std::vector<bool> reduced; // per input axis
    bool ncnn = true;          // ncnn's form: MAX / MIN start at -+FLT_MAX, L2 flushes below FLT_MIN, `coeff`
    float coeff = 1.f;         // ncnn's final factor (MEAN: coeff / count already)
    bool passthrough = false;  // ONNX's noop_with_empty_axes with no axes: a copy
};

// False when `op` is no Reduction layer or its axes are known only at run time.
bool reduction_plan(const Op& op, const std::vector<TensorDesc>& in, ReductionPlan& plan);

} // namespace kestrel
