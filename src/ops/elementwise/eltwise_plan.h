// An Eltwise layer's steps as data, for backends that run them themselves
// (the Vulkan backend): acc = coeff[0] * x0, then per further input k
// acc = acc (op) x_k (sum: + coeff[k] * x_k); Mean divides the last sum by
// the count. ncnn's form has inputs of one shape; ONNX's (Sum, Max, Min,
// Mean) broadcast them numpy's way.
#pragma once
#include <vector>

#include "kestrel/op.h"

namespace kestrel {

struct EltwisePlan {
    enum class Step { Product, Sum, Max, NanMax, NanMin, Mean };
    Step step = Step::Sum;
    std::vector<float> coeffs; // one per input (1 where the layer has none)
};

// False when `op` is no Eltwise layer.
bool eltwise_plan(const Op& op, const std::vector<TensorDesc>& in, EltwisePlan& plan);

} // namespace kestrel
