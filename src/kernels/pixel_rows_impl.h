// The pixel row loops (pixel_rows.h), written once: a file under
// kernels/<isa>/ compiles them for its ISA.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>

#include "kernels/pixel_rows.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

// BT.601 luma in 14-bit fixed point (0.299, 0.587, 0.114), rounded.
inline uint8_t luma(int r, int g, int b) { return static_cast<uint8_t>((r * 4899 + g * 9617 + b * 1868 + (1 << 13)) >> 14); }

// n pixels from kPixelLayouts[F] to kPixelLayouts[T].
template <int F, int T> void convert_run(const uint8_t* __restrict src, uint8_t* __restrict dst, int64_t n)
{
    constexpr PixelLayout in = kPixelLayouts[F], out = kPixelLayouts[T];
    constexpr bool to_gray = out.channels == 1, from_gray = in.channels == 1;
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t* s = src + i * in.channels;
        uint8_t* d = dst + i * out.channels;
        const uint8_t r = s[in.r], g = s[in.g], b = s[in.b];
        if constexpr (to_gray) {
            d[0] = from_gray ? r : luma(r, g, b);
        } else {
            d[out.r] = r;
            d[out.g] = g;
            d[out.b] = b;
            if constexpr (out.a >= 0) d[out.a] = in.a >= 0 ? s[in.a] : 255;
        }
    }
}

// k.convert[F][T] for every T, and then for every F.
template <int F, int... T> void set_runs_from(PixelRowsKernel& k, std::integer_sequence<int, T...>)
{
    ((k.convert[F][T] = &convert_run<F, T>), ...);
}
template <int... F> void set_all_runs(PixelRowsKernel& k, std::integer_sequence<int, F...> formats)
{
    (set_runs_from<F>(k, formats), ...);
}

// BT.601 video range to RGB in 20-bit fixed point (OpenCV's and Android's
// constants), into a layout with red at R and blue at B.
template <int R, int B>
void yuv_row(const uint8_t* __restrict y, const int32_t* __restrict u, const int32_t* __restrict v, int64_t n,
             uint8_t* __restrict dst)
{
    constexpr int kShift = 20, kHalf = 1 << (kShift - 1);
    constexpr int kY = 1220542, kUB = 2116026, kUG = -409993, kVG = -852492, kVR = 1673527;
    const auto saturate = [](int x) { return static_cast<uint8_t>(std::min(std::max(x, 0), 255)); };
    for (int64_t i = 0; i < n; ++i) {
        const int cu = u[i] - 128, cv = v[i] - 128;
        const int yy = std::max(0, y[i] - 16) * kY + kHalf;
        dst[i * 3 + R] = saturate((yy + kVR * cv) >> kShift);
        dst[i * 3 + 1] = saturate((yy + kVG * cv + kUG * cu) >> kShift);
        dst[i * 3 + B] = saturate((yy + kUB * cu) >> kShift);
    }
}

inline PixelRowsKernel pixel_rows_kernel_of(const char* isa)
{
    PixelRowsKernel k{isa, {}, yuv_row<0, 2>, yuv_row<2, 0>};
    set_all_runs(k, std::make_integer_sequence<int, kPixelFormats>{});
    return k;
}

} // namespace
} // namespace kestrel::detail
