// Pixel formats and their conversions, camera frames (YUV 4:2:0) included.
#include <cctype>
#include <vector>

#include "kestrel/error.h"
#include "kestrel/image.h"
#include "kernels/pixel_rows.h"

namespace kestrel::image {

namespace {

// The formats' names, in PixelFormat's order (their layouts: kPixelLayouts).
constexpr const char* kNames[kPixelFormats] = {"RGB", "BGR", "GRAY", "RGBA", "BGRA"};

int format_index(PixelFormat f)
{
    const int i = static_cast<int>(f);
    check(i >= 0 && i < kPixelFormats, "unknown pixel format ", i);
    return i;
}

const PixelLayout& layout(PixelFormat f) { return kPixelLayouts[format_index(f)]; }

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

// A 4:2:0 frame: Y rows, and the chroma sample of each 2x2 block read by
// `chroma(row/2, col/2, u, v)`, given to the row kernel once per pixel.
template <class Chroma>
Tensor yuv420_to_pixels(const uint8_t* y_plane, int width, int height, PixelFormat to, const Chroma& chroma)
{
    check(width > 0 && height > 0 && width % 2 == 0 && height % 2 == 0, "YUV 4:2:0 frame: width and height must be ",
          "positive and even, got ", width, "x", height);
    check(to == PixelFormat::RGB || to == PixelFormat::BGR, "YUV frames convert to RGB or BGR, not ",
          pixel_format_name(to));
    const PixelRowsKernel& kernel = pixel_rows_kernel();
    const YuvRowFn row_to_pixels = to == PixelFormat::RGB ? kernel.yuv_to_rgb : kernel.yuv_to_bgr;
    Tensor out({height, width, 3}, DType::U8);
    uint8_t* dst = out.data<uint8_t>();
    std::vector<int32_t> us(static_cast<size_t>(width)), vs(static_cast<size_t>(width));
    for (int row = 0; row < height; ++row) {
        if (row % 2 == 0)
            for (int col = 0; col < width; col += 2) {
                chroma(row / 2, col / 2, us[col], vs[col]);
                us[col + 1] = us[col];
                vs[col + 1] = vs[col];
            }
        row_to_pixels(y_plane + static_cast<int64_t>(row) * width, us.data(), vs.data(), width,
                      dst + static_cast<int64_t>(row) * width * 3);
    }
    return out;
}

} // namespace

int channels(PixelFormat format) { return layout(format).channels; }

const char* pixel_format_name(PixelFormat format) { return kNames[format_index(format)]; }

PixelFormat parse_pixel_format(const std::string& name)
{
    std::string upper = name;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    for (int i = 0; i < kPixelFormats; ++i)
        if (upper == kNames[i]) return static_cast<PixelFormat>(i);
    fail("unknown pixel format '", name, "' (RGB, BGR, GRAY, RGBA, BGRA)");
}

Tensor convert_pixels(const Tensor& pixels, PixelFormat from, PixelFormat to)
{
    int64_t height, width;
    check_pixels(pixels, from, height, width);
    Tensor result({height, width, channels(to)}, DType::U8);
    pixel_rows_kernel().convert[format_index(from)][format_index(to)](pixels.data<uint8_t>(), result.data<uint8_t>(),
                                                                    height * width);
    return result;
}

Tensor yuv420sp_to_pixels(const uint8_t* yuv, int width, int height, bool nv21, PixelFormat to)
{
    check(yuv != nullptr, "YUV frame: no data");
    const uint8_t* uv = yuv + static_cast<int64_t>(width) * height;
    return yuv420_to_pixels(yuv, width, height, to, [&](int r, int c, int32_t& u, int32_t& v) {
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
    return yuv420_to_pixels(yuv, width, height, to, [&](int r, int c, int32_t& u, int32_t& v) {
        u = us[r * half_width + c];
        v = vs[r * half_width + c];
    });
}

} // namespace kestrel::image
