// Layout folding: a format's activations in its axis order, mapped onto the
// engine's. The engine's layers take channels first (N, C, spatial...), as
// ncnn and ONNX write them, so for those front-ends every function here is the
// identity. TensorFlow Lite and TensorFlow keep channels last (N, spatial...,
// C): their front-ends convert through these functions, so that each layer's
// axes and constants are turned once, while converting, instead of a
// transpose running around every layer.
#pragma once
#include <vector>

#include "kestrel/tensor.h"

namespace kestrel {

enum class AxisOrder { ChannelsFirst, ChannelsLast };

// For a tensor of `rank` in `order`: perm[k] is the file's axis that becomes
// the engine's axis k. Ranks below 3 have no spatial axes to move past: the
// identity.
std::vector<int> engine_permutation(AxisOrder order, int rank);
// The engine's axis for the file's `axis` (negative: counted from the end).
int engine_axis(AxisOrder order, int rank, int axis);
Shape engine_shape(AxisOrder order, const Shape& shape);
// A constant laid out in the engine's order (the tensor itself when the order is the identity).
Tensor to_engine_order(AxisOrder order, const Tensor& t);

} // namespace kestrel
