// Where an output index samples its input: the tap rules of ncnn's Interp,
// of ONNX's Resize and of the filter kernels (TensorFlow's list, for images
// and Interp's filter form), each making the AxisTaps of one axis (applied by
// ResamplePlan).
#pragma once

#include "kestrel/image.h"
#include "ops/resample/resample_plan.h"

namespace kestrel {

// Interp's resize_type (param 0), shared by both forms.
// 4 (ours, ncnn's form only): a filter kernel of kestrel/image.h (filter_axis_taps).
enum ResizeType { kResizeNearest = 1, kResizeLinear = 2, kResizeCubic = 3, kResizeFilter = 4 };

// ncnn's coordinates: nearest takes min(int(x * scale), in - 1); linear and
// cubic (A = -0.75) sample (x + 0.5) * in / out - 0.5, or x * (in-1)/(out-1)
// with align_corner, taps clamped to the borders as ncnn does.
struct NcnnTapRule {
    int type = kResizeNearest;
    bool align_corner = false;
};
AxisTaps ncnn_axis_taps(const NcnnTapRule& rule, size_t axis, int64_t in_len, int64_t out_len, float nearest_scale);

// ONNX's coordinate transforms and nearest modes.
enum OnnxCoord {
    kHalfPixel = 0,
    kPytorchHalfPixel = 1,
    kAlignCorners = 2,
    kAsymmetric = 3,
    kTfHalfPixelForNn = 4,
    kTfCropAndResize = 5
};
struct OnnxTapRule {
    int type = kResizeNearest;
    int coord = kHalfPixel;
    int nearest = 0; // 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil
    float cubic_a = -0.75f;
    bool exclude_outside = false;
};
// One resized axis: lengths, scale, and the roi (tf_crop_and_resize only).
// `resized` is the unrounded output length (in_len * scale for scales, as
// ONNX's align_corners uses it).
struct OnnxAxis {
    int64_t in_len, out_len;
    double scale, resized, roi_start = 0, roi_end = 1;
};
AxisTaps onnx_axis_taps(const OnnxTapRule& rule, size_t axis, const OnnxAxis& a);

// A filter kernel centered on each output's position (half-pixel centers),
// widened by the scale when antialiasing a downscale; weights normalized to
// sum to 1 (see kestrel/image.h for the filters and edge policies).
AxisTaps filter_axis_taps(const image::ResizeOptions& rule, size_t axis, int64_t in_len, int64_t out_len);

} // namespace kestrel
