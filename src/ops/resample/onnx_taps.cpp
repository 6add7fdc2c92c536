// ONNX's tap rule (see taps.h): its coordinate transforms, nearest modes,
// cubic coefficient and exclude_outside; source indices clamped to the edge
// as ONNX's reference does.
#include <algorithm>
#include <cmath>

#include "ops/resample/taps.h"

namespace kestrel {

namespace {

double source_coordinate(int coord, int64_t x, const OnnxAxis& a)
{
    const double in_span = static_cast<double>(a.in_len - 1), out_span = static_cast<double>(a.out_len - 1);
    switch (coord) {
    case kHalfPixel: return (x + 0.5) / a.scale - 0.5;
    case kPytorchHalfPixel: return a.out_len > 1 ? (x + 0.5) / a.scale - 0.5 : 0.0;
    case kAlignCorners: return a.resized != 1.0 ? x * in_span / (a.resized - 1) : 0.0;
    case kAsymmetric: return x / a.scale;
    case kTfCropAndResize:
        return a.out_len > 1 ? a.roi_start * in_span + x * (a.roi_end - a.roi_start) * in_span / out_span
                             : 0.5 * (a.roi_start + a.roi_end) * in_span;
    default: return (x + 0.5) / a.scale; // tf_half_pixel_for_nn
    }
}

int64_t nearest_index(int mode, double x)
{
    const bool half = x - std::floor(x) == 0.5;
    switch (mode) {
    case 0: return static_cast<int64_t>(half ? std::floor(x) : std::round(x));
    case 1: return static_cast<int64_t>(half ? std::ceil(x) : std::round(x));
    case 2: return static_cast<int64_t>(std::floor(x));
    default: return static_cast<int64_t>(std::ceil(x));
    }
}

float cubic_weight(double a, double d)
{
    const double x = std::fabs(d);
    if (x <= 1) return static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
    if (x < 2) return static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
    return 0.f;
}

} // namespace

AxisTaps onnx_axis_taps(const OnnxTapRule& rule, size_t axis, const OnnxAxis& a)
{
    const int taps = rule.type == kResizeNearest ? 1 : rule.type == kResizeLinear ? 2 : 4;
    AxisTaps t;
    t.axis = axis;
    t.resize(a.out_len, taps);
    if (rule.coord == kTfCropAndResize) t.outside.assign(static_cast<size_t>(a.out_len), 0);
    auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), a.in_len - 1); };
    for (int64_t x = 0; x < a.out_len; ++x) {
        const double src = source_coordinate(rule.coord, x, a);
        if (rule.coord == kTfCropAndResize && (src < 0 || src > static_cast<double>(a.in_len - 1))) {
            t.outside[static_cast<size_t>(x)] = 1;
            continue;
        }
        int64_t* index = &t.index[static_cast<size_t>(x * taps)];
        float* weight = &t.weight[static_cast<size_t>(x * taps)];
        if (rule.type == kResizeNearest) {
            index[0] = clamp(nearest_index(rule.nearest, src));
            weight[0] = 1.f;
            continue;
        }
        const double base = std::floor(src), frac = src - base;
        const int64_t x0 = static_cast<int64_t>(base);
        if (rule.type == kResizeLinear) {
            index[0] = x0;
            index[1] = x0 + 1;
            weight[0] = static_cast<float>(1 - frac);
            weight[1] = static_cast<float>(frac);
        } else {
            for (int k = 0; k < 4; ++k) {
                index[k] = x0 + k - 1;
                weight[k] = cubic_weight(rule.cubic_a, frac - (k - 1));
            }
        }
        if (rule.exclude_outside) {
            float sum = 0;
            for (int k = 0; k < taps; ++k) {
                if (index[k] < 0 || index[k] >= a.in_len) weight[k] = 0;
                sum += weight[k];
            }
            for (int k = 0; k < taps; ++k) weight[k] = sum != 0 ? weight[k] / sum : 0;
        }
        for (int k = 0; k < taps; ++k) index[k] = clamp(index[k]);
    }
    return t;
}

} // namespace kestrel
