// Crop, flip and quarter turns of (height, width[, channels]) tensors of any
// dtype: whole pixels moved as bytes.
#include <cstring>

#include "kestrel/error.h"
#include "kestrel/image.h"

namespace kestrel::image {

namespace {

// Height, width and bytes per pixel of an image tensor.
struct Geometry {
    int64_t height, width;
    size_t pixel_bytes;
};

Geometry geometry(const Tensor& image, const char* what)
{
    check(image.rank() == 2 || image.rank() == 3, what, ": expected (height, width[, channels]), got ",
          shape_str(image.shape()));
    const int64_t channels = image.rank() == 3 ? image.dim(2) : 1;
    return {image.dim(0), image.dim(1), static_cast<size_t>(channels) * dtype_size(image.dtype())};
}

Shape with_size(const Tensor& image, int64_t height, int64_t width)
{
    Shape s = image.shape();
    s[0] = height;
    s[1] = width;
    return s;
}

// out(y, x) = in(source(y, x)) for every output pixel.
template <class Source> Tensor remap(const Tensor& image, const Geometry& g, int64_t height, int64_t width, const Source& source)
{
    Tensor out(with_size(image, height, width), image.dtype());
    const auto* src = static_cast<const uint8_t*>(image.raw());
    auto* dst = static_cast<uint8_t*>(out.raw());
    for (int64_t y = 0; y < height; ++y)
        for (int64_t x = 0; x < width; ++x) {
            int64_t sy, sx;
            source(y, x, sy, sx);
            std::memcpy(dst + (y * width + x) * g.pixel_bytes, src + (sy * g.width + sx) * g.pixel_bytes, g.pixel_bytes);
        }
    return out;
}

} // namespace

Tensor crop(const Tensor& image, int x, int y, int width, int height)
{
    const Geometry g = geometry(image, "crop");
    check(x >= 0 && y >= 0 && width > 0 && height > 0 && x + int64_t(width) <= g.width && y + int64_t(height) <= g.height,
          "crop: the rectangle at (", x, ", ", y, ") of ", width, "x", height, " is not inside the ", g.width, "x",
          g.height, " image");
    Tensor out(with_size(image, height, width), image.dtype());
    const size_t row_bytes = static_cast<size_t>(width) * g.pixel_bytes;
    for (int r = 0; r < height; ++r)
        std::memcpy(static_cast<uint8_t*>(out.raw()) + r * row_bytes,
                    static_cast<const uint8_t*>(image.raw()) + ((y + r) * g.width + x) * g.pixel_bytes, row_bytes);
    return out;
}

Tensor flip(const Tensor& image, bool horizontal, bool vertical)
{
    const Geometry g = geometry(image, "flip");
    return remap(image, g, g.height, g.width, [&](int64_t y, int64_t x, int64_t& sy, int64_t& sx) {
        sy = vertical ? g.height - 1 - y : y;
        sx = horizontal ? g.width - 1 - x : x;
    });
}

Tensor rotate90(const Tensor& image, int quarter_turns)
{
    const Geometry g = geometry(image, "rotate90");
    const int turns = ((quarter_turns % 4) + 4) % 4;
    const bool swapped = turns % 2 == 1;
    return remap(image, g, swapped ? g.width : g.height, swapped ? g.height : g.width,
                 [&](int64_t y, int64_t x, int64_t& sy, int64_t& sx) {
                     switch (turns) {
                     case 0: sy = y, sx = x; break;
                     case 1: sy = g.height - 1 - x, sx = y; break;              // clockwise
                     case 2: sy = g.height - 1 - y, sx = g.width - 1 - x; break;
                     default: sy = x, sx = g.width - 1 - y; break;              // counter-clockwise
                     }
                 });
}

} // namespace kestrel::image
