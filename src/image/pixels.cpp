// Pixel formats and their conversions, camera frames (YUV 4:2:0) included.
#include <algorithm>
#include <array>
#include <utility>
#include <cctype>

#include "kestrel/error.h"
#include "kestrel/image.h"

namespace kestrel::image {

namespace {

// Where a format keeps red, green, blue and alpha (-1: absent; gray keeps luma at 0).
struct Layout {
    PixelFormat format;
    const char* name;
    int channels, r, g, b, a;
};
constexpr Layout kLayouts[] = {
    {PixelFormat::RGB, "RGB", 3, 0, 1, 2, -1},  {PixelFormat::BGR, "BGR", 3, 2, 1, 0, -1},
    {PixelFormat::GRAY, "GRAY", 1, 0, 0, 0, -1}, {PixelFormat::RGBA, "RGBA", 4, 0, 1, 2, 3},
    {PixelFormat::BGRA, "BGRA", 4, 2, 1, 0, 3},
};

constexpr int kFormats = 5;

const Layout& layout(PixelFormat f)
{
    for (const Layout& l : kLayouts)
        if (l.format == f) return l;
    fail("unknown pixel format ", static_cast<int>(f));
}

constexpr Layout layout_of(int f) { return kLayouts[f]; }

// BT.601 luma in 14-bit fixed point (0.299, 0.587, 0.114), rounded.
uint8_t luma(int r, int g, int b) { return static_cast<uint8_t>((r * 4899 + g * 9617 + b * 1868 + (1 << 13)) >> 14); }

// (h, w, c) U8 pixels of `format`: its height and width.
void check_pixels(const Tensor& pixels, PixelFormat format, int64_t& height, int64_t& width)
{
    const int c = channels(format);
    const bool plain_gray = format == PixelFormat::GRAY && pixels.rank() == 2;
    check(pixels.dtype() == DType::U8 && (pixels.rank() == 3 || plain_gray), "pixels must be U8 (height, width, ",
          c, ") for ", pixel_format_name(format), ", got ", dtype_name(pixels.dtype()), " ", shape_str(pixels.shape()));
    check(plain_gray || pixels.dim(2) == c, "pixels of format ", pixel_format_name(format), " have ", c,
          " channels, got ", shape_str(pixels.shape()));
    height = pixels.dim(0);
    width = pixels.dim(1);
}

// n pixels from format kLayouts[F] to kLayouts[T], the layouts known at
// compile time so that the loop vectorizes.
template <int F, int T> void convert_run(const uint8_t* src, uint8_t* dst, int64_t n)
{
    constexpr Layout in = layout_of(F), out = layout_of(T);
    constexpr bool to_gray = out.format == PixelFormat::GRAY, from_gray = in.format == PixelFormat::GRAY;
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t* s = src + i * in.channels;
        uint8_t* d = dst + i * out.channels;
        const uint8_t r = s[in.r], g = s[in.g], b = s[in.b];
        if (to_gray) {
            d[0] = from_gray ? r : luma(r, g, b);
            continue;
        }
        d[out.r] = r;
        d[out.g] = g;
        d[out.b] = b;
        if (out.a >= 0) d[out.a] = in.a >= 0 ? s[in.a] : 255;
    }
}

using ConvertRun = void (*)(const uint8_t*, uint8_t*, int64_t);

template <int F, int... T> constexpr std::array<ConvertRun, kFormats> runs_from_format(std::integer_sequence<int, T...>)
{
    return {&convert_run<F, T>...};
}

template <int... F> constexpr std::array<std::array<ConvertRun, kFormats>, kFormats> all_runs(std::integer_sequence<int, F...>)
{
    return {runs_from_format<F>(std::make_integer_sequence<int, kFormats>{})...};
}

// kConvertRuns[from][to], indexed as kLayouts.
constexpr auto kConvertRuns = all_runs(std::make_integer_sequence<int, kFormats>{});

int layout_index(PixelFormat f)
{
    for (int i = 0; i < kFormats; ++i)
        if (kLayouts[i].format == f) return i;
    fail("unknown pixel format ", static_cast<int>(f));
}

uint8_t saturate(int v) { return static_cast<uint8_t>(std::min(std::max(v, 0), 255)); }

// BT.601 video range to RGB in 20-bit fixed point (OpenCV's and Android's constants).
struct YuvToRgb {
    static constexpr int kShift = 20, kHalf = 1 << (kShift - 1);
    static constexpr int kY = 1220542, kUB = 2116026, kUG = -409993, kVG = -852492, kVR = 1673527;
    int ruv, guv, buv;
    YuvToRgb(int u, int v)
        : ruv(kHalf + kVR * (v - 128)), guv(kHalf + kVG * (v - 128) + kUG * (u - 128)), buv(kHalf + kUB * (u - 128))
    {
    }
    void write(int y, uint8_t* px, const Layout& l) const
    {
        const int yy = std::max(0, y - 16) * kY;
        px[l.r] = saturate((yy + ruv) >> kShift);
        px[l.g] = saturate((yy + guv) >> kShift);
        px[l.b] = saturate((yy + buv) >> kShift);
    }
};

// A 4:2:0 frame: Y rows, and the chroma sample of each 2x2 block read by `chroma(row/2, col/2, u, v)`.
template <class Chroma>
Tensor yuv420_to_pixels(const uint8_t* y_plane, int width, int height, PixelFormat to, const Chroma& chroma)
{
    check(width > 0 && height > 0 && width % 2 == 0 && height % 2 == 0, "YUV 4:2:0 frame: width and height must be ",
          "positive and even, got ", width, "x", height);
    check(to == PixelFormat::RGB || to == PixelFormat::BGR, "YUV frames convert to RGB or BGR, not ",
          pixel_format_name(to));
    const Layout& l = layout(to);
    Tensor out({height, width, 3}, DType::U8);
    uint8_t* dst = out.data<uint8_t>();
    for (int row = 0; row < height; ++row) {
        const uint8_t* ys = y_plane + static_cast<int64_t>(row) * width;
        uint8_t* d = dst + static_cast<int64_t>(row) * width * 3;
        for (int col = 0; col < width; col += 2) {
            int u, v;
            chroma(row / 2, col / 2, u, v);
            const YuvToRgb k(u, v);
            k.write(ys[col], d + col * 3, l);
            k.write(ys[col + 1], d + col * 3 + 3, l);
        }
    }
    return out;
}

} // namespace

int channels(PixelFormat format) { return layout(format).channels; }

const char* pixel_format_name(PixelFormat format) { return layout(format).name; }

PixelFormat parse_pixel_format(const std::string& name)
{
    std::string upper = name;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    for (const Layout& l : kLayouts)
        if (upper == l.name) return l.format;
    fail("unknown pixel format '", name, "' (RGB, BGR, GRAY, RGBA, BGRA)");
}

Tensor convert_pixels(const Tensor& pixels, PixelFormat from, PixelFormat to)
{
    int64_t height, width;
    check_pixels(pixels, from, height, width);
    Tensor result({height, width, channels(to)}, DType::U8);
    kConvertRuns[layout_index(from)][layout_index(to)](pixels.data<uint8_t>(), result.data<uint8_t>(), height * width);
    return result;
}

Tensor yuv420sp_to_pixels(const uint8_t* yuv, int width, int height, bool nv21, PixelFormat to)
{
    check(yuv != nullptr, "YUV frame: no data");
    const uint8_t* uv = yuv + static_cast<int64_t>(width) * height;
    return yuv420_to_pixels(yuv, width, height, to, [&](int r, int c, int& u, int& v) {
        const uint8_t* pair = uv + static_cast<int64_t>(r) * width + 2 * c;
        u = pair[nv21 ? 1 : 0];
        v = pair[nv21 ? 0 : 1];
    });
}

Tensor i420_to_pixels(const uint8_t* yuv, int width, int height, PixelFormat to)
{
    check(yuv != nullptr, "YUV frame: no data");
    const int64_t plane = static_cast<int64_t>(width) * height, half_width = width / 2;
    const uint8_t *us = yuv + plane, *vs = us + plane / 4;
    return yuv420_to_pixels(yuv, width, height, to, [&](int r, int c, int& u, int& v) {
        u = us[r * half_width + c];
        v = vs[r * half_width + c];
    });
}

} // namespace kestrel::image
