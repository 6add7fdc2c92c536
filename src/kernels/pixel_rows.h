// Rows of 8-bit pixels: conversions between the interleaved formats of
// kestrel/image.h (RGB, BGR, GRAY, RGBA, BGRA) and rows of YUV 4:2:0 camera
// frames to RGB or BGR. The loops are written once (pixel_rows_impl.h) for
// the compiler's vectorizer, with every layout known at compile time, and
// compiled per ISA: byte shuffles need SSSE3 at least, so the generic (SSE2)
// build runs them 2x slower than AVX2.
#pragma once
#include <cstdint>
#include <vector>

namespace kestrel {

// Where a format keeps red, green, blue and alpha (-1: absent; gray keeps
// luma at 0), in the order of image::PixelFormat.
struct PixelLayout {
    int channels, r, g, b, a;
};
inline constexpr int kPixelFormats = 5;
inline constexpr PixelLayout kPixelLayouts[kPixelFormats] = {
    {3, 0, 1, 2, -1}, // RGB
    {3, 2, 1, 0, -1}, // BGR
    {1, 0, 0, 0, -1}, // GRAY
    {4, 0, 1, 2, 3},  // RGBA
    {4, 2, 1, 0, 3},  // BGRA
};

// n pixels from one format to another.
using PixelRunFn = void (*)(const uint8_t* src, uint8_t* dst, int64_t n);
// n pixels of a 4:2:0 row: luma values and each pixel's own chroma (a
// sample repeated for the two pixels it covers), to 3-channel pixels.
using YuvRowFn = void (*)(const uint8_t* y, const int32_t* u, const int32_t* v, int64_t n, uint8_t* dst);

struct PixelRowsKernel {
    const char* isa;
    PixelRunFn convert[kPixelFormats][kPixelFormats]; // [from][to]
    YuvRowFn yuv_to_rgb, yuv_to_bgr;
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const PixelRowsKernel& pixel_rows_kernel();
std::vector<const PixelRowsKernel*> pixel_rows_kernels_available();

} // namespace kestrel
