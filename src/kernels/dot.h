// Dot product of float vectors in 16 independent partial sums, added up in a
// fixed order at the end: the compiler can keep the partial sums in vector
// registers (no reassociation needed), so the loop runs at vector width
// instead of waiting on one add chain. The result depends only on n and the
// data, never on threads or callers.
#pragma once
#include <cstdint>

namespace kestrel {

inline float dot_f32(const float* a, const float* b, int64_t n)
{
    constexpr int kLanes = 16;
    float lane[kLanes] = {};
    int64_t k = 0;
    for (; k + kLanes <= n; k += kLanes)
        for (int j = 0; j < kLanes; ++j) lane[j] += a[k + j] * b[k + j];
    float sum = 0.f;
    for (int j = 0; j < kLanes; ++j) sum += lane[j];
    for (; k < n; ++k) sum += a[k] * b[k];
    return sum;
}

} // namespace kestrel
