// An Interp layer's resize as data (its ResamplePlan, as the CPU layer makes
// it), for backends that apply the tap tables themselves (the Vulkan backend).
#pragma once
#include "ops/resample/resample_plan.h"

namespace kestrel {

// The plan for these inputs, the input's shape as the steps see it (ncnn's
// rank-1 input as (w, 1, 1)) and the fill outside an ONNX crop's roi; false
// when `op` is no Interp layer or its sizes are known only at run time.
bool interp_plan(const Op& op, const std::vector<TensorDesc>& in, ResamplePlan& plan, Shape& sampled_in, float& fill);

} // namespace kestrel
