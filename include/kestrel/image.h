// Image pre-processing: camera frames and decoded pictures into a model's
// float input, as ncnn's Mat::from_pixels_resize / yuv420sp2rgb and MNN's
// ImageProcess do. Images are U8 tensors of shape (height, width, channels),
// channels interleaved; a model input is a float (channels, height, width).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/tensor.h"

namespace kestrel::image {

enum class PixelFormat { RGB, BGR, GRAY, RGBA, BGRA };
int channels(PixelFormat format);
// "RGB", "BGR", "GRAY", "RGBA", "BGRA" (any case); throws kestrel::Error otherwise.
PixelFormat parse_pixel_format(const std::string& name);
const char* pixel_format_name(PixelFormat format);

// Between any two formats: channel order, alpha dropped (or 255 added), and
// gray as ITU-R BT.601 luma (0.299 R + 0.587 G + 0.114 B, rounded, as OpenCV).
Tensor convert_pixels(const Tensor& pixels, PixelFormat from, PixelFormat to);

// Camera frames, ITU-R BT.601 video range (Y 16-235) as Android cameras and
// OpenCV's COLOR_YUV2RGB_*: YUV420sp is a Y plane then interleaved chroma at
// half resolution, V first (NV21) or U first (NV12); I420 is Y, U, V planes.
// `width` and `height` are even. `to` is RGB or BGR.
Tensor yuv420sp_to_pixels(const uint8_t* yuv, int width, int height, bool nv21, PixelFormat to = PixelFormat::RGB);
Tensor i420_to_pixels(const uint8_t* yuv, int width, int height, PixelFormat to = PixelFormat::RGB);

// The resampling filters, TensorFlow's tf.image.resize list: each output
// sample is a weighted sum of input samples under a kernel centered on its
// position (half-pixel centers). With antialias, a downscale widens the kernel
// by the scale (a low-pass filter, as PIL and tf.image.resize(antialias=True)).
enum class Filter {
    Nearest,      // the sample under the output's center (OpenCV's INTER_NEAREST_EXACT, PIL's NEAREST)
    Bilinear,     // the tent kernel (OpenCV's INTER_LINEAR without antialias, PIL's BILINEAR with it)
    Bicubic,      // Keys' cubic, a = cubic_a (-0.5 as TF and PIL; -0.75 as ONNX, PyTorch and OpenCV)
    Lanczos3,     // sinc windowed by sinc, radius 3
    Lanczos5,     // radius 5
    Gaussian,     // radius 1.5, sigma 0.5 (TF's: sigma = radius / 3)
    MitchellCubic,// Mitchell-Netravali, B = C = 1/3
    Area,         // each output the mean of the input area it covers (OpenCV's INTER_AREA, TF's area)
};
// "nearest", "bilinear" (or "linear"), "bicubic" (or "cubic"), "lanczos3",
// "lanczos5", "gaussian", "mitchellcubic", "area"; throws kestrel::Error otherwise.
Filter parse_filter(const std::string& name);

struct ResizeOptions {
    Filter filter = Filter::Bilinear;
    bool antialias = false;
    float cubic_a = -0.5f;
    // Taps past the border: dropped and the rest renormalized (PIL, TF,
    // PyTorch's antialias) or, off, the border sample repeated (OpenCV).
    bool exclude_outside = false;
};

// Any (height, width[, channels]) U8 or F32 tensor. U8 results are rounded to
// nearest and saturated.
Tensor resize(const Tensor& image, int width, int height, const ResizeOptions& options = {});
// The rectangle at (x, y) of width x height, inside the image.
Tensor crop(const Tensor& image, int x, int y, int width, int height);
// Mirror left-right (horizontal) and/or top-bottom (vertical).
Tensor flip(const Tensor& image, bool horizontal, bool vertical);
// `quarter_turns` x 90 degrees clockwise (negative: counter-clockwise).
Tensor rotate90(const Tensor& image, int quarter_turns);

// A model input: pixels of format `from` (U8, (h, w, channels(from)))
// resized to width x height when given (0: unchanged; as pixels of format
// `from`, as ncnn's from_pixels_resize does), as format `to`, then per channel
// (value - mean[c]) * norm[c] (ncnn's substract_mean_normalize; empty mean
// or norm: none), as a float (channels(to), height, width) tensor.
struct FromPixelsOptions {
    int width = 0, height = 0;
    ResizeOptions resize;
    std::vector<float> mean, norm;
};
Tensor from_pixels(const Tensor& pixels, PixelFormat from, PixelFormat to, const FromPixelsOptions& options = {});
// Back: a float (c, h, w) tensor, each value value / norm[c] + mean[c]
// (empty: none), rounded and saturated to U8 pixels (h, w, c).
Tensor to_pixels(const Tensor& chw, const std::vector<float>& mean = {}, const std::vector<float>& norm = {});

} // namespace kestrel::image
