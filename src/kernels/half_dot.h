// Dot products of IEEE half-float weights with float inputs, for layers that
// keep their weights in half precision (LoadOptions::fp16_weights): the large
// fully connected layers of VGG and AlexNet stream their weights from memory
// once per run, so half the bytes is nearly half the time. One kernel per ISA
// from the template in half_dot_rows.h (F16C conversions on AVX2/AVX-512).
#pragma once
#include <cstdint>
#include <vector>

namespace kestrel {

struct HalfDotKernel {
    const char* isa;
    // y[o] = sum over i < n of half(w[o * n + i]) * x[i], for o < rows: partial
    // sums per vector lane, added up in a fixed order (the same bits whatever
    // the thread split).
    void (*rows)(const uint16_t* w, const float* x, int64_t n, int64_t rows, float* y);
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const HalfDotKernel& half_dot_kernel();
std::vector<const HalfDotKernel*> half_dot_kernels_available();

} // namespace kestrel
