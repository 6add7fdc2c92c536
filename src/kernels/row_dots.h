// Dot products of weight rows with one float input, y[o] = w[o] . x: the
// fully connected layers of a single input, whose weights stream from memory
// once per run. Float weights, or IEEE half-float ones for layers that keep
// them in half precision (LoadOptions::fp16_weights: half the bytes, nearly
// half the time), or bfloat16 ones (Options::precision BF16, built by the
// layer when a session asks). One kernel per ISA from the template in
// row_dots_impl.h (F16C conversions on AVX2/AVX-512).
#pragma once
#include <cstdint>
#include <vector>

namespace kestrel {

struct RowDotKernel {
    const char* isa;
    // y[o] = sum over i < n of w[o * n + i] * x[i], for o < rows: partial sums
    // per vector lane, added up in a fixed order (the same bits whatever the
    // thread split).
    void (*floats)(const float* w, const float* x, int64_t n, int64_t rows, float* y);
    // The same with half-float weights.
    void (*halves)(const uint16_t* w, const float* x, int64_t n, int64_t rows, float* y);
    // The same with bfloat16 weights.
    void (*bf16s)(const uint16_t* w, const float* x, int64_t n, int64_t rows, float* y);
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const RowDotKernel& row_dot_kernel();
std::vector<const RowDotKernel*> row_dot_kernels_available();

} // namespace kestrel
