#include "kernels/pool2d.h"

#include <algorithm>
#include <cfloat>

namespace kestrel {

namespace {

template <class T> T lowest();
template <> float lowest<float>() { return -FLT_MAX; }
template <> int8_t lowest<int8_t>() { return -128; }

template <class T> void max_plane(const T* p, T* o, const Pool2dGeometry& g)
{
    const int64_t h = g.in_h, w = g.in_w;
    auto at = [&](int64_t y, int64_t x) { return (y < 0 || y >= h || x < 0 || x >= w) ? lowest<T>() : p[y * w + x]; };
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const int64_t y0 = oy * g.stride_h - g.pad_top;
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
            const int64_t x0 = ox * g.stride_w - g.pad_left;
            T m;
            if (y0 >= 0 && x0 >= 0 && y0 + g.kernel_h <= h && x0 + g.kernel_w <= w) {
                const T* wp = p + y0 * w + x0;
                m = wp[0];
                for (int64_t ky = 0; ky < g.kernel_h; ++ky)
                    for (int64_t kx = 0; kx < g.kernel_w; ++kx) m = std::max(m, wp[ky * w + kx]);
            } else {
                m = at(y0, x0);
                for (int64_t ky = 0; ky < g.kernel_h; ++ky)
                    for (int64_t kx = 0; kx < g.kernel_w; ++kx) m = std::max(m, at(y0 + ky, x0 + kx));
            }
            o[oy * g.out_w + ox] = m;
        }
    }
}

void average_plane(const float* p, float* o, const Pool2dGeometry& g)
{
    const int64_t h = g.in_h, w = g.in_w;
    const float maxk = static_cast<float>(g.kernel_h * g.kernel_w);
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const int64_t y0 = oy * g.stride_h - g.pad_top;
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
            const int64_t x0 = ox * g.stride_w - g.pad_left;
            const bool inside = y0 >= 0 && x0 >= 0 && y0 + g.kernel_h <= h && x0 + g.kernel_w <= w;
            float sum = 0.f;
            if (inside && (g.count_include_pad || (y0 >= g.count_y0 && x0 >= g.count_x0 && y0 + g.kernel_h <= g.count_y1 &&
                                                    x0 + g.kernel_w <= g.count_x1))) {
                const float* wp = p + y0 * w + x0;
                for (int64_t ky = 0; ky < g.kernel_h; ++ky)
                    for (int64_t kx = 0; kx < g.kernel_w; ++kx) sum += wp[ky * w + kx];
                o[oy * g.out_w + ox] = sum / maxk;
                continue;
            }
            int64_t area = 0;
            for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
                const int64_t y = y0 + ky;
                if (!g.count_include_pad && (y < g.count_y0 || y >= g.count_y1)) continue;
                for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
                    const int64_t x = x0 + kx;
                    if (!g.count_include_pad && (x < g.count_x0 || x >= g.count_x1)) continue;
                    if (y >= 0 && y < h && x >= 0 && x < w) sum += p[y * w + x];
                    ++area;
                }
            }
            o[oy * g.out_w + ox] = g.count_include_pad ? sum / maxk : (area > 0 ? sum / static_cast<float>(area) : 0.f);
        }
    }
}

template <class T, class Plane>
void each_plane(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ExecContext& ctx, Plane plane)
{
    const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    ctx.parallel_for(x.dim(0), [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) plane(x.data<T>() + c * in_plane, y.data<T>() + c * out_plane, g);
    });
}

} // namespace

void max_pool2d(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ExecContext& ctx)
{
    if (x.dtype() == DType::I8)
        each_plane<int8_t>(x, g, y, ctx, max_plane<int8_t>);
    else
        each_plane<float>(x, g, y, ctx, max_plane<float>);
}

void average_pool2d(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ExecContext& ctx)
{
    each_plane<float>(x, g, y, ctx, average_plane);
}

} // namespace kestrel
