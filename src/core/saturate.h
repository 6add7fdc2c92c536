// Float to uint8 as image pixels take it: clamped to [0, 255], rounded half up
// (ncnn's from_pixels/to_pixels rounding); NaN gives 0.
#pragma once
#include <cstdint>

namespace kestrel {

inline uint8_t saturate_pixel(float v) { return static_cast<uint8_t>((v > 0.f ? (v < 255.f ? v : 255.f) : 0.f) + 0.5f); }

} // namespace kestrel
