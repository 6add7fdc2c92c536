// ncnn's tap rule (see taps.h), its float arithmetic kept so results match ncnn's.
#include <algorithm>
#include <cmath>

#include "ops/resample/taps.h"

namespace kestrel {

namespace {

// ncnn's source position of output index dx: integer base sx and fraction fx.
void source_position(int64_t in, int64_t out, int64_t dx, bool align_corner, int64_t& sx, float& fx)
{
    double scale = static_cast<double>(in) / static_cast<double>(out);
    if (align_corner) scale = out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
    fx = align_corner ? static_cast<float>(static_cast<double>(dx) * scale)
                      : static_cast<float>((static_cast<double>(dx) + 0.5) * scale - 0.5);
    sx = static_cast<int64_t>(std::floor(fx));
    fx -= static_cast<float>(sx);
}

void nearest_taps(AxisTaps& t, int64_t in, float scale)
{
    for (int64_t dx = 0; dx < t.out_len; ++dx) {
        t.index[dx] = std::min(static_cast<int64_t>(static_cast<float>(dx) * scale), in - 1);
        t.weight[dx] = 1.f;
    }
}

void linear_taps(AxisTaps& t, int64_t in, bool align_corner)
{
    for (int64_t dx = 0; dx < t.out_len; ++dx) {
        int64_t sx;
        float fx;
        source_position(in, t.out_len, dx, align_corner, sx, fx);
        if (sx < 0) {
            sx = 0;
            fx = 0.f;
        }
        if (sx >= in - 1) {
            sx = in - 2;
            fx = 1.f;
        }
        t.index[2 * dx] = std::max<int64_t>(sx, 0);
        t.index[2 * dx + 1] = std::min(sx + 1, in - 1);
        t.weight[2 * dx] = 1.f - fx;
        t.weight[2 * dx + 1] = fx;
    }
}

void cubic_taps(AxisTaps& t, int64_t in, bool align_corner)
{
    const float A = -0.75f;
    for (int64_t dx = 0; dx < t.out_len; ++dx) {
        int64_t sx;
        float fx;
        source_position(in, t.out_len, dx, align_corner, sx, fx);
        float* w = &t.weight[4 * dx];
        const float x0 = fx + 1, x1 = fx, x2 = 1 - fx;
        w[0] = A * x0 * x0 * x0 - 5 * A * x0 * x0 + 8 * A * x0 - 4 * A;
        w[1] = (A + 2) * x1 * x1 * x1 - (A + 3) * x1 * x1 + 1;
        w[2] = (A + 2) * x2 * x2 * x2 - (A + 3) * x2 * x2 + 1;
        w[3] = 1.f - w[0] - w[1] - w[2];
        for (int i = 0; i < 4; ++i) t.index[4 * dx + i] = std::min(std::max<int64_t>(sx - 1 + i, 0), in - 1);
    }
}

} // namespace

AxisTaps ncnn_axis_taps(const NcnnTapRule& rule, size_t axis, int64_t in_len, int64_t out_len, float nearest_scale)
{
    AxisTaps t;
    t.axis = axis;
    t.resize(out_len, rule.type == kResizeNearest ? 1 : rule.type == kResizeLinear ? 2 : 4);
    if (rule.type == kResizeNearest) nearest_taps(t, in_len, nearest_scale);
    else if (rule.type == kResizeLinear) linear_taps(t, in_len, rule.align_corner);
    else cubic_taps(t, in_len, rule.align_corner);
    return t;
}

} // namespace kestrel
