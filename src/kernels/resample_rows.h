// Weighted sums of whole rows: the contiguous step of a resize, each output
// row a few input rows weighted by their taps (an image's rows, a tensor's
// planes). dst[i] = sum over k < taps of w[k] * rows[k][i], for i < n, summed
// in tap order from the first product, each product rounded before it is
// added: the same bits as one scalar multiply and add per value. Float or U8
// rows in; float, or U8 rounded to nearest and saturated (NaN: 0), out.
#pragma once
#include <cstdint>
#include <vector>

namespace kestrel {

struct ResampleRowsKernel {
    const char* isa;
    void (*f32_to_f32)(const float* const* rows, const float* w, int taps, int64_t n, float* dst);
    void (*u8_to_f32)(const uint8_t* const* rows, const float* w, int taps, int64_t n, float* dst);
    void (*f32_to_u8)(const float* const* rows, const float* w, int taps, int64_t n, uint8_t* dst);
    void (*u8_to_u8)(const uint8_t* const* rows, const float* w, int taps, int64_t n, uint8_t* dst);
    // The step along a row (an image's columns): dst[i] = sum over k < taps
    // of w[k*n + i] * src[at[k*n + i]], for i < n, in tap order from the
    // first product, each product rounded before it is added; vectors of
    // outputs with their taps gathered. U8: src + at[.] + 3 must be readable
    // (the gathers read 4 bytes).
    void (*gather_f32)(const float* src, const int32_t* at, const float* w, int taps, int64_t n, float* dst);
    void (*gather_u8)(const uint8_t* src, const int32_t* at, const float* w, int taps, int64_t n, float* dst);
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const ResampleRowsKernel& resample_rows_kernel();
std::vector<const ResampleRowsKernel*> resample_rows_kernels_available();

// The kernel's entry for these element types.
template <class In, class Out> struct ResampleRowsEntry;
template <> struct ResampleRowsEntry<float, float> {
    static constexpr auto of = &ResampleRowsKernel::f32_to_f32;
};
template <> struct ResampleRowsEntry<uint8_t, float> {
    static constexpr auto of = &ResampleRowsKernel::u8_to_f32;
};
template <> struct ResampleRowsEntry<float, uint8_t> {
    static constexpr auto of = &ResampleRowsKernel::f32_to_u8;
};
template <> struct ResampleRowsEntry<uint8_t, uint8_t> {
    static constexpr auto of = &ResampleRowsKernel::u8_to_u8;
};
// The gathered step's entry for this input type.
template <class In> struct ResampleGatherEntry;
template <> struct ResampleGatherEntry<float> {
    static constexpr auto of = &ResampleRowsKernel::gather_f32;
};
template <> struct ResampleGatherEntry<uint8_t> {
    static constexpr auto of = &ResampleRowsKernel::gather_u8;
};

} // namespace kestrel
