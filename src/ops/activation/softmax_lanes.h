// A Softmax layer's lanes as data, for backends that normalize them
// themselves (the Vulkan backend): `in` seen as (outer, n, inner) around the
// axis the CPU layer resolves (ncnn's rank-1 rule included).
#pragma once
#include "kestrel/op.h"

namespace kestrel {

// False when `op` is no Softmax layer; throws for an axis out of range.
bool softmax_lanes(const Op& op, const Shape& in, int64_t& outer, int64_t& n, int64_t& inner);

} // namespace kestrel
