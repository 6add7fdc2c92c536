// The C API's image pre-processing: thin wrappers over kestrel/image.h.
#include <cstring>

#include "capi/c_api_internal.h"
#include "kestrel/image.h"

using kestrel::capi::fail_with;
using kestrel::capi::guarded;
using kestrel::capi::null_argument;

namespace {

namespace image = kestrel::image;

using kestrel::capi::enum_value;

bool valid_format(const kestrel_pixel_format& f)
{
    return enum_value(f) >= KESTREL_PIXEL_RGB && enum_value(f) <= KESTREL_PIXEL_BGRA;
}
bool valid_filter(const kestrel_filter& f)
{
    return enum_value(f) >= KESTREL_FILTER_NEAREST && enum_value(f) <= KESTREL_FILTER_AREA;
}

// The enums share kestrel::image's order.
image::PixelFormat format_of(kestrel_pixel_format f) { return static_cast<image::PixelFormat>(f); }

std::vector<float> per_channel(const float* values, kestrel_pixel_format f)
{
    return values ? std::vector<float>(values, values + image::channels(format_of(f))) : std::vector<float>();
}

// Rows of `stride` bytes copied into a packed (height, width, channels) tensor.
kestrel::Tensor packed_pixels(const uint8_t* pixels, int width, int height, int stride, kestrel_pixel_format f)
{
    const int64_t row = int64_t(width) * image::channels(format_of(f));
    kestrel::check(width > 0 && height > 0, "pixels of ", width, "x", height, ": sizes must be positive");
    kestrel::check(stride == 0 || stride >= row, "a stride of ", stride, " bytes is shorter than a row of ", row);
    kestrel::Tensor t({height, width, image::channels(format_of(f))}, kestrel::DType::U8);
    for (int y = 0; y < height; ++y)
        std::memcpy(t.data<uint8_t>() + y * row, pixels + int64_t(y) * (stride ? stride : row), static_cast<size_t>(row));
    return t;
}

} // namespace

void kestrel_from_pixels_options_init(kestrel_from_pixels_options* options)
{
    if (!options) return;
    *options = kestrel_from_pixels_options{};
    options->to = KESTREL_PIXEL_RGB;
    options->filter = KESTREL_FILTER_BILINEAR;
}

kestrel_status kestrel_image_from_pixels(const uint8_t* pixels, int width, int height, int stride,
                                         kestrel_pixel_format from, const kestrel_from_pixels_options* options,
                                         kestrel_tensor** tensor)
{
    if (!pixels) return null_argument("pixels");
    if (!options) return null_argument("options");
    if (!tensor) return null_argument("tensor");
    *tensor = nullptr;
    if (!valid_format(from) || !valid_format(options->to) || !valid_filter(options->filter))
        return fail_with(KESTREL_ERROR_ARGUMENT, "unknown pixel format or filter");
    return guarded([&] {
        image::FromPixelsOptions o;
        o.width = options->width;
        o.height = options->height;
        o.resize.filter = static_cast<image::Filter>(options->filter);
        o.resize.antialias = options->antialias != 0;
        o.mean = per_channel(options->mean, options->to);
        o.norm = per_channel(options->norm, options->to);
        const kestrel::Tensor in = packed_pixels(pixels, width, height, stride, from);
        *tensor = new kestrel_tensor{image::from_pixels(in, format_of(from), format_of(options->to), o)};
    });
}

kestrel_status kestrel_image_yuv420sp_to_pixels(const uint8_t* yuv, int width, int height, int nv21,
                                                kestrel_pixel_format to, kestrel_tensor** pixels)
{
    if (!yuv) return null_argument("yuv");
    if (!pixels) return null_argument("pixels");
    *pixels = nullptr;
    if (!valid_format(to)) return fail_with(KESTREL_ERROR_ARGUMENT, "unknown pixel format");
    return guarded([&] { *pixels = new kestrel_tensor{image::yuv420sp_to_pixels(yuv, width, height, nv21 != 0, format_of(to))}; });
}

kestrel_status kestrel_image_i420_to_pixels(const uint8_t* yuv, int width, int height, kestrel_pixel_format to,
                                            kestrel_tensor** pixels)
{
    if (!yuv) return null_argument("yuv");
    if (!pixels) return null_argument("pixels");
    *pixels = nullptr;
    if (!valid_format(to)) return fail_with(KESTREL_ERROR_ARGUMENT, "unknown pixel format");
    return guarded([&] { *pixels = new kestrel_tensor{image::i420_to_pixels(yuv, width, height, format_of(to))}; });
}
