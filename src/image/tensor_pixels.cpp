// Pixels to a model's float input and back (ncnn's from_pixels_resize with
// substract_mean_normalize, and to_pixels).
#include "core/saturate.h"
#include "kestrel/error.h"
#include "kestrel/image.h"

namespace kestrel::image {

namespace {

// mean/norm per channel: empty, or one value per channel.
void check_per_channel(const std::vector<float>& values, int64_t channels, const char* what)
{
    check(values.empty() || static_cast<int64_t>(values.size()) == channels, what, " has ", values.size(),
          " values for ", channels, " channels");
}

} // namespace

Tensor from_pixels(const Tensor& pixels, PixelFormat from, PixelFormat to, const FromPixelsOptions& options)
{
    check((options.width > 0) == (options.height > 0), "from_pixels: give both width and height, or neither");
    // Resized as pixels of the source format, then converted (as ncnn's from_pixels_resize).
    const bool resized = options.width > 0 && (pixels.rank() < 2 || options.width != pixels.dim(1) ||
                                                options.height != pixels.dim(0));
    const Tensor image = convert_pixels(resized ? resize(pixels, options.width, options.height, options.resize) : pixels,
                                        from, to); // checks the layout
    const int64_t height = image.dim(0), width = image.dim(1), c = channels(to);
    check_per_channel(options.mean, c, "from_pixels: mean");
    check_per_channel(options.norm, c, "from_pixels: norm");
    Tensor out({c, height, width}, DType::F32);
    const uint8_t* src = image.data<uint8_t>();
    float* dst = out.data<float>();
    for (int64_t ch = 0; ch < c; ++ch) {
        const float mean = options.mean.empty() ? 0.f : options.mean[ch];
        const float norm = options.norm.empty() ? 1.f : options.norm[ch];
        float* plane = dst + ch * height * width;
        for (int64_t i = 0; i < height * width; ++i) plane[i] = (static_cast<float>(src[i * c + ch]) - mean) * norm;
    }
    return out;
}

Tensor to_pixels(const Tensor& chw, const std::vector<float>& mean, const std::vector<float>& norm)
{
    check(chw.rank() == 3 && chw.dtype() == DType::F32, "to_pixels: expected a float (channels, height, width), got ",
          dtype_name(chw.dtype()), " ", shape_str(chw.shape()));
    const int64_t c = chw.dim(0), height = chw.dim(1), width = chw.dim(2);
    check_per_channel(mean, c, "to_pixels: mean");
    check_per_channel(norm, c, "to_pixels: norm");
    for (float n : norm) check(n != 0.f, "to_pixels: a norm of 0 cannot be undone");
    Tensor out({height, width, c}, DType::U8);
    const float* src = chw.data<float>();
    uint8_t* dst = out.data<uint8_t>();
    for (int64_t ch = 0; ch < c; ++ch) {
        const float m = mean.empty() ? 0.f : mean[ch], n = norm.empty() ? 1.f : norm[ch];
        const float* plane = src + ch * height * width;
        for (int64_t i = 0; i < height * width; ++i) {
            dst[i * c + ch] = saturate_pixel(plane[i] / n + m);
        }
    }
    return out;
}

} // namespace kestrel::image
