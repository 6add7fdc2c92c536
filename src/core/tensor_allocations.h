// Tensor storage allocations made so far in this process (Tensor(shape),
// Tensor::zeros, clone, to, ...): the tests check with it that a Session's
// runs after the first, with the same shapes, allocate nothing.
#pragma once
#include <cstdint>

namespace kestrel {

int64_t tensor_allocations();

} // namespace kestrel
