#include "kernels/pool2d.h"
#include "kernels/window_blocks.h"

#include <algorithm>
#include <cstring>
#include <cfloat>
#include <type_traits>
#include <vector>

#include "kernels/depthwise_conv2d.h"
#include "kernels/max_pool_int8.h"

namespace kestrel {

namespace {

template <class T> T lowest();
template <> float lowest<float>() { return -FLT_MAX; }
template <> int8_t lowest<int8_t>() { return -128; }

// The max of a window row: kernel_w taps from r[x0] (KW > 0: a fixed width the
// compiler unrolls).
template <int KW, class T> T row_max(const T* r, int64_t kernel_w)
{
    const int64_t n = KW > 0 ? KW : kernel_w;
    T m = r[0];
    for (int64_t kx = 1; kx < n; ++kx) m = std::max(m, r[kx]);
    return m;
}

// orow[ox] = (first ? the max of : max of orow[ox] and) the window row from
// r[ox * stride], for ox in [lo, hi) (SW > 0: the stride as a constant).
// f(std::integral_constant<int, SW>{}) with SW = sw for strides 1 and 2, else
// 0 (a run-time stride): at a constant stride the compiler vectorizes the
// windows (with shuffles at 2).
template <class F> void with_constant_stride(int64_t sw, const F& f)
{
    if (sw == 1)
        f(std::integral_constant<int, 1>{});
    else if (sw == 2)
        f(std::integral_constant<int, 2>{});
    else
        f(std::integral_constant<int, 0>{});
}

template <int KW, int SW, class T>
void interior_maxes(const T* r, int64_t kernel_w, int64_t stride, bool first, int64_t lo, int64_t hi, T* orow)
{
    const int64_t sw = SW > 0 ? SW : stride;
    if (first)
        for (int64_t ox = lo; ox < hi; ++ox) orow[ox] = row_max<KW>(r + ox * sw, kernel_w);
    else
        for (int64_t ox = lo; ox < hi; ++ox) orow[ox] = std::max(orow[ox], row_max<KW>(r + ox * sw, kernel_w));
}

// The maximum of a row r's (w values) window of kw taps from x0, the taps
// outside the row skipped (a window over the padding).
template <class T> T clipped_max(const T* r, int64_t w, int64_t x0, int64_t kw)
{
    T m = lowest<T>();
    for (int64_t x = std::max<int64_t>(0, x0); x < std::min(w, x0 + kw); ++x) m = std::max(m, r[x]);
    return m;
}

// Max pooling, one window row at a time: each output row takes the max of
// its windows' rows (padding rows are the lowest value, so they are skipped),
// and within a row the windows inside the input run without bounds checks.
// The max of a set does not depend on the order it is taken in, so this is
// the window-by-window result exactly.
template <int KW, class T> void max_plane_rows(const T* p, T* o, const Pool2dGeometry& g)
{
    const int64_t h = g.in_h, w = g.in_w, kw = g.kernel_w, sw = g.stride_w, pl = g.pad_left;
    // Outputs [ox_lo, ox_hi) have windows wholly inside the row.
    const int64_t ox_lo = std::min(g.out_w, (pl + sw - 1) / sw);
    const int64_t ox_hi = std::max(ox_lo, std::min(g.out_w, w + pl - kw >= 0 ? (w + pl - kw) / sw + 1 : 0));
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const int64_t y0 = oy * g.stride_h - g.pad_top;
        const int64_t ky_begin = std::max<int64_t>(0, -y0), ky_end = std::min(g.kernel_h, h - y0);
        T* orow = o + oy * g.out_w;
        if (ky_begin >= ky_end || ky_end - ky_begin < g.kernel_h) std::fill(orow, orow + g.out_w, lowest<T>());
        for (int64_t ky = ky_begin; ky < ky_end; ++ky) {
            const T* r = p + (y0 + ky) * w;
            const bool first = ky == ky_begin && ky_end - ky_begin == g.kernel_h;
            auto put = [&](int64_t ox, T m) { orow[ox] = first ? m : std::max(orow[ox], m); };
            for (int64_t ox = 0; ox < ox_lo; ++ox) put(ox, clipped_max(r, w, ox * sw - pl, kw));
            with_constant_stride(sw, [&](auto stride) {
                interior_maxes<KW, decltype(stride)::value>(r - pl, kw, sw, first, ox_lo, ox_hi, orow);
            });
            for (int64_t ox = ox_hi; ox < g.out_w; ++ox) put(ox, clipped_max(r, w, ox * sw - pl, kw));
        }
    }
}

// Large windows (SPP's 5x5, 9x9 and 13x13 at stride 1) in two passes: each
// input row's maxima over the windows' columns, then each output the maximum
// of its rows' (kh + kw taps per output, not kh * kw). Scanning a window row
// by row finds the same first largest value as scanning it tap by tap, so
// the results are the window loop's.
template <class T> void max_plane_separable(const T* p, T* o, const Pool2dGeometry& g)
{
    thread_local std::vector<T> row_maxima; // the thread's own, kept from call to call
    const int64_t h = g.in_h, w = g.in_w, out_w = g.out_w;
    row_maxima.resize(static_cast<size_t>(h * out_w));
    for (int64_t y = 0; y < h; ++y) {
        const T* r = p + y * w;
        T* m = row_maxima.data() + y * out_w;
        for (int64_t ox = 0; ox < out_w; ++ox) {
            const int64_t x0 = ox * g.stride_w - g.pad_left;
            T v = lowest<T>();
            for (int64_t x = std::max<int64_t>(0, x0); x < std::min(w, x0 + g.kernel_w); ++x) v = std::max(v, r[x]);
            m[ox] = v;
        }
    }
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const int64_t y0 = oy * g.stride_h - g.pad_top;
        T* orow = o + oy * out_w;
        std::fill(orow, orow + out_w, lowest<T>());
        for (int64_t y = std::max<int64_t>(0, y0); y < std::min(h, y0 + g.kernel_h); ++y) {
            const T* m = row_maxima.data() + y * out_w;
            for (int64_t ox = 0; ox < out_w; ++ox) orow[ox] = std::max(orow[ox], m[ox]);
        }
    }
}

// m[x] = max(m[x], r[x]) for x in [0, n), 16 at a time (a byte store could
// alias anything, so the compiler would not vectorize the plain loop).
void max_into(int8_t* m, const int8_t* r, int64_t n)
{
    typedef int8_t bytes __attribute__((vector_size(16)));
    int64_t x = 0;
    for (; x + 16 <= n; x += 16) {
        bytes a, b;
        std::memcpy(&a, m + x, 16);
        std::memcpy(&b, r + x, 16);
        a = a > b ? a : b;
        std::memcpy(m + x, &a, 16);
    }
    for (; x < n; ++x) m[x] = std::max(m[x], r[x]);
}

// orow[ox] = max(r[2ox], r[2ox+1], r[2ox+2]) for ox from lo, 8 at a time:
// the bytes as 16-bit lanes (even byte low, odd byte high), the maxima taken
// in 16 bits and narrowed; a tail as the last 8, overlapping (the same
// values written twice). Returns the first ox not written (lo when fewer than 8).
int64_t windows_3_stride_2(const int8_t* r, int64_t lo, int64_t hi, int8_t* orow)
{
    typedef int16_t lanes __attribute__((vector_size(16)));
    typedef int8_t bytes __attribute__((vector_size(8)));
    const auto windows8 = [&](int64_t ox) { // reads r[2ox .. 2ox + 17]
        lanes w, next;
        std::memcpy(&w, r + 2 * ox, 16);
        std::memcpy(&next, r + 2 * ox + 2, 16);
        const lanes even = (w << 8) >> 8, odd = w >> 8, after = (next << 8) >> 8;
        lanes v = even > odd ? even : odd;
        v = v > after ? v : after;
        const bytes out = __builtin_convertvector(v, bytes);
        std::memcpy(orow + ox, &out, 8);
    };
    if (hi - lo < 8) return lo;
    for (int64_t ox = lo; ox + 8 <= hi; ox += 8) windows8(ox);
    if ((hi - lo) % 8) windows8(hi - 8);
    return hi;
}

// Columns first: each output row's window rows reduced to one row (whole
// rows, which vectorize at any stride), then its windows along that row.
// For int8 planes, whose strided windows the compiler leaves scalar.
template <int KW> void max_plane_columns_first(const int8_t* p, int8_t* o, const Pool2dGeometry& g)
{
    thread_local std::vector<int8_t> columns; // the thread's own, kept from call to call
    const int64_t h = g.in_h, w = g.in_w, kw = g.kernel_w, sw = g.stride_w, pl = g.pad_left;
    columns.resize(static_cast<size_t>(w) + 16); // windows_3_stride_2 loads a byte past its last window
    int8_t* m = columns.data();
    const int64_t ox_lo = std::min(g.out_w, (pl + sw - 1) / sw);
    const int64_t ox_hi = std::max(ox_lo, std::min(g.out_w, w + pl - kw >= 0 ? (w + pl - kw) / sw + 1 : 0));
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const int64_t y0 = oy * g.stride_h - g.pad_top;
        const int64_t y_begin = std::max<int64_t>(0, y0), y_end = std::min(h, y0 + g.kernel_h);
        int8_t* orow = o + oy * g.out_w;
        if (y_begin >= y_end) {
            std::fill(orow, orow + g.out_w, lowest<int8_t>());
            continue;
        }
        std::copy(p + y_begin * w, p + (y_begin + 1) * w, m);
        for (int64_t y = y_begin + 1; y < y_end; ++y) max_into(m, p + y * w, w);
        for (int64_t ox = 0; ox < ox_lo; ++ox) orow[ox] = clipped_max(m, w, ox * sw - pl, kw);
        int64_t ox = ox_lo;
        if (KW == 3 && sw == 2) ox = windows_3_stride_2(m - pl, ox_lo, ox_hi, orow);
        with_constant_stride(sw, [&](auto stride) {
            interior_maxes<KW, decltype(stride)::value>(m - pl, kw, sw, true, ox, ox_hi, orow);
        });
        for (int64_t ox = ox_hi; ox < g.out_w; ++ox) orow[ox] = clipped_max(m, w, ox * sw - pl, kw);
    }
}

template <class T> void max_plane(const T* p, T* o, const Pool2dGeometry& g)
{
    if (g.kernel_h * g.kernel_w > 9 && g.stride_h < g.kernel_h) return max_plane_separable(p, o, g);
    if constexpr (std::is_same_v<T, int8_t>) {
        if (g.kernel_w == 3) return max_plane_columns_first<3>(p, o, g);
        if (g.kernel_w == 2) return max_plane_columns_first<2>(p, o, g);
        return max_plane_columns_first<0>(p, o, g);
    }
    switch (g.kernel_w) {
    case 2: max_plane_rows<2>(p, o, g); break;
    case 3: max_plane_rows<3>(p, o, g); break;
    default: max_plane_rows<0>(p, o, g); break;
    }
}

// One output's average with bounds checks (a window crossing the input's or
// the counted range's edges).
float clipped_average(const float* p, const Pool2dGeometry& g, int64_t y0, int64_t x0)
{
    float sum = 0.f;
    int64_t area = 0;
    for (int64_t ky = 0; ky < g.kernel_h; ++ky) {
        const int64_t y = y0 + ky;
        if (!g.count_include_pad && (y < g.count_y0 || y >= g.count_y1)) continue;
        for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
            const int64_t x = x0 + kx;
            if (!g.count_include_pad && (x < g.count_x0 || x >= g.count_x1)) continue;
            if (y >= 0 && y < g.in_h && x >= 0 && x < g.in_w) sum += p[y * g.in_w + x];
            ++area;
        }
    }
    const float maxk = static_cast<float>(g.kernel_h * g.kernel_w);
    return g.count_include_pad ? sum / maxk : (area > 0 ? sum / static_cast<float>(area) : 0.f);
}

// orow[ox] for ox in [lo, hi), windows wholly inside: the taps summed in (ky,
// kx) order from 0, then divided by their count, one tap across the outputs at
// a time (SW > 0: the stride as a constant, so the compiler vectorizes).
template <int SW>
void interior_averages(const float* top, const Pool2dGeometry& g, int64_t stride, int64_t lo, int64_t hi, float* orow)
{
    const int64_t sw = SW > 0 ? SW : stride;
    const float maxk = static_cast<float>(g.kernel_h * g.kernel_w);
    if (hi - lo < 8) { // too few for vectors: window by window
        for (int64_t ox = lo; ox < hi; ++ox) {
            float sum = 0.f;
            for (int64_t ky = 0; ky < g.kernel_h; ++ky)
                for (int64_t kx = 0; kx < g.kernel_w; ++kx) sum += top[ky * g.in_w + ox * sw + kx];
            orow[ox] = sum / maxk;
        }
        return;
    }
    std::fill(orow + lo, orow + hi, 0.f);
    for (int64_t ky = 0; ky < g.kernel_h; ++ky)
        for (int64_t kx = 0; kx < g.kernel_w; ++kx) {
            const float* r = top + ky * g.in_w + kx;
            for (int64_t ox = lo; ox < hi; ++ox) orow[ox] += r[ox * sw];
        }
    for (int64_t ox = lo; ox < hi; ++ox) orow[ox] /= maxk;
}

// Averages a row at a time: the windows inside the input (and the counted
// range) by interior_averages, the others one by one.
void average_plane(const float* p, float* o, const Pool2dGeometry& g)
{
    const int64_t sw = g.stride_w, pl = g.pad_left;
    // Input columns [x_lo, x_hi) may hold a whole window.
    const int64_t x_lo = g.count_include_pad ? 0 : std::max<int64_t>(0, g.count_x0);
    const int64_t x_hi = g.count_include_pad ? g.in_w : std::min(g.in_w, g.count_x1);
    const int64_t ox_lo = std::min(g.out_w, (x_lo + pl + sw - 1) / sw);
    const int64_t last = x_hi - g.kernel_w + pl; // the last window start inside, in padded columns
    const int64_t ox_hi = std::max(ox_lo, std::min(g.out_w, last >= 0 ? last / sw + 1 : 0));
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const int64_t y0 = oy * g.stride_h - g.pad_top;
        float* orow = o + oy * g.out_w;
        const bool rows_inside = y0 >= 0 && y0 + g.kernel_h <= g.in_h &&
                                 (g.count_include_pad || (y0 >= g.count_y0 && y0 + g.kernel_h <= g.count_y1));
        const int64_t lo = rows_inside ? ox_lo : g.out_w, hi = rows_inside ? ox_hi : g.out_w;
        for (int64_t ox = 0; ox < lo; ++ox) orow[ox] = clipped_average(p, g, y0, ox * sw - pl);
        const float* top = p + y0 * g.in_w - pl;
        if (lo < hi)
            with_constant_stride(sw, [&](auto stride) {
                interior_averages<decltype(stride)::value>(top, g, sw, lo, hi, orow);
            });
        for (int64_t ox = hi; ox < g.out_w; ++ox) orow[ox] = clipped_average(p, g, y0, ox * sw - pl);
    }
}

template <class T, class Plane>
void each_plane(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx, Plane plane)
{
    const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    ctx.parallel_for(x.dim(0), [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) plane(x.data<T>() + c * in_plane, y.data<T>() + c * out_plane, g);
    });
}

} // namespace

namespace detail {
// The plain loops as the int8 max-pooling kernel of CPUs without AVX-512 (kernels/max_pool_int8.h).
const Int8MaxPoolKernel& int8_max_pool_kernel_generic()
{
    static const Int8MaxPoolKernel k{"generic", max_plane<int8_t>};
    return k;
}
} // namespace detail

namespace {

// One window over the whole plane (global pooling), for a block of planes at a
// time: each plane's sum (or max) runs through its values in order, as the
// window loops do, but the planes' chains interleave, so the adds of one do not
// wait on another's latency. The chains start from `start`, or (no start) from
// each plane's first value, as the window loops do for sums and for maxima.
template <class T, class Step>
void whole_planes(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx, const T* start,
                  Step step, float divisor, int64_t first_plane = 0)
{
    constexpr int64_t kPlanes = 8;
    const int64_t planes = x.dim(0), plane = g.in_h * g.in_w, todo = planes - first_plane;
    ctx.parallel_for((todo + kPlanes - 1) / kPlanes, [&](int64_t begin, int64_t end) {
        for (int64_t blk = begin; blk < end; ++blk) {
            const int64_t c0 = first_plane + blk * kPlanes, n = std::min(kPlanes, planes - c0);
            const T* p = x.data<T>() + c0 * plane;
            T acc[kPlanes] = {};
            for (int64_t c = 0; c < n; ++c) acc[c] = start ? *start : p[c * plane];
            const int64_t first = start ? 0 : 1;
            if (n == kPlanes)
                for (int64_t i = first; i < plane; ++i)
                    for (int64_t c = 0; c < kPlanes; ++c) acc[c] = step(acc[c], p[c * plane + i]);
            else
                for (int64_t i = first; i < plane; ++i)
                    for (int64_t c = 0; c < n; ++c) acc[c] = step(acc[c], p[c * plane + i]);
            for (int64_t c = 0; c < n; ++c) y.data<T>()[c0 + c] = divisor > 0.f ? T(acc[c] / divisor) : acc[c];
        }
    });
}

// Float planes the same way, whole blocks of the depthwise kernel's channel
// width by its vectors (across the planes, each plane's values in order: the
// same bits), the planes after them as above. Sums start from 0 and are then
// divided by `divisor`; maxima start from each plane's first value.
void whole_float_planes(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx, bool sums,
                        float divisor)
{
    const DepthwiseKernel& kern = depthwise_kernel();
    const int64_t width = kern.block, blocks = x.dim(0) / width, plane = g.in_h * g.in_w;
    ctx.parallel_for(blocks, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
            float* o = y.data<float>() + b * width;
            (sums ? kern.whole_sums : kern.whole_maxima)(x.data<float>() + b * width * plane, plane, plane, o);
            if (sums)
                for (int64_t ch = 0; ch < width; ++ch) o[ch] = o[ch] / divisor;
        }
    });
    const float zero = 0.f;
    if (sums)
        whole_planes<float>(x, g, y, ctx, &zero, [](float a, float v) { return a + v; }, divisor, blocks * width);
    else
        whole_planes<float>(x, g, y, ctx, nullptr, [](float a, float v) { return std::max(a, v); }, 0.f,
                            blocks * width);
}

bool is_whole_plane(const Pool2dGeometry& g)
{
    return g.out_h == 1 && g.out_w == 1 && g.kernel_h == g.in_h && g.kernel_w == g.in_w && g.pad_top == 0 &&
           g.pad_left == 0;
}

// Small planes go by blocks of the depthwise kernel's channel width
// (vectors across channels, depthwise_conv2d.h), with the same results.
Depthwise2dGeometry window_geometry(const Pool2dGeometry& g, float pad_value)
{
    Depthwise2dGeometry dg;
    dg.in_h = g.in_h, dg.in_w = g.in_w, dg.pad_top = g.pad_top, dg.pad_left = g.pad_left, dg.pad_value = pad_value;
    dg.out_h = g.out_h, dg.out_w = g.out_w, dg.kh = g.kernel_h, dg.kw = g.kernel_w;
    dg.stride_h = g.stride_h, dg.stride_w = g.stride_w;
    return dg;
}

bool takes_blocks(const Tensor& x, const Pool2dGeometry& g)
{
    const Depthwise2dGeometry dg = window_geometry(g, 0.f);
    return x.dtype() == DType::F32 && dg.blocked() && x.dim(0) >= depthwise_kernel().block && dg.supported();
}

// Max pooling goes by rows, vectors along them, wherever an output row fills
// a vector (2x2 and 3x3 windows): squeezenet's 3x3 stride-2 pools from
// 111x111 and 55x55 run 2x and 1.25x faster than by blocks, whose transposed
// copy of the planes costs more than the windows; from 27x27 blocks win.
bool max_takes_rows(const Tensor& x, const Pool2dGeometry& g)
{
    const Depthwise2dGeometry dg = window_geometry(g, 0.f);
    return x.dtype() == DType::F32 && max_plane_supported(dg) && dg.supported() &&
           g.out_w > depthwise_kernel().block;
}

void max_rows(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx)
{
    const DepthwiseKernel& kern = depthwise_kernel();
    const Depthwise2dGeometry dg = window_geometry(g, lowest<float>());
    const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    ctx.parallel_for(x.dim(0), [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> scratch; // the thread's own, kept from call to call
        scratch.resize(std::max(scratch.size(), static_cast<size_t>(dg.scratch_floats())));
        for (int64_t c = begin; c < end; ++c)
            kern.plane_max(dg, x.data<float>() + c * in_plane, y.data<float>() + c * out_plane, scratch.data());
    });
}

// Whole blocks of planes by block(first plane, scratch), the rest by plane(in, out, g).
template <class Block, class Plane>
void blocks_then_planes(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx,
                        int64_t scratch_floats, const Block& block, const Plane& plane)
{
    const int64_t width = depthwise_kernel().block, planes = x.dim(0), blocks = planes / width;
    const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    ctx.parallel_for(blocks + planes - blocks * width, [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> scratch; // the thread's own, kept from call to call
        scratch.resize(std::max(scratch.size(), static_cast<size_t>(scratch_floats)));
        for (int64_t u = begin; u < end; ++u) {
            if (u < blocks) {
                block(u * width, scratch.data());
                continue;
            }
            const int64_t c = u - blocks + blocks * width;
            plane(x.data<float>() + c * in_plane, y.data<float>() + c * out_plane, g);
        }
    });
}

// Average pooling's divisor per output: the window's size with
// count_include_pad, else its taps inside the counted range.
std::vector<float> average_divisors(const Pool2dGeometry& g)
{
    const auto counted = [](int64_t start, int64_t k, int64_t lo, int64_t hi) {
        return std::max<int64_t>(0, std::min(start + k, hi) - std::max(start, lo));
    };
    std::vector<float> d(static_cast<size_t>(g.out_h * g.out_w));
    for (int64_t oy = 0; oy < g.out_h; ++oy)
        for (int64_t ox = 0; ox < g.out_w; ++ox) {
            const int64_t y0 = oy * g.stride_h - g.pad_top, x0 = ox * g.stride_w - g.pad_left;
            const int64_t area = counted(y0, g.kernel_h, g.count_y0, g.count_y1) *
                                 counted(x0, g.kernel_w, g.count_x0, g.count_x1);
            d[oy * g.out_w + ox] = static_cast<float>(g.count_include_pad ? g.kernel_h * g.kernel_w : area);
        }
    return d;
}

void max_blocks(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx)
{
    const DepthwiseKernel& kern = depthwise_kernel();
    const Depthwise2dGeometry dg = window_geometry(g, lowest<float>());
    const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    blocks_then_planes(x, g, y, ctx, dg.block_scratch_floats(kern.block), [&](int64_t c0, float* scratch) {
        kern.channels_max(dg, {x.data<float>() + c0 * in_plane, in_plane, kern.block},
                          {y.data<float>() + c0 * out_plane, out_plane, kern.block}, scratch);
    }, max_plane<float>);
}

// Sums with weights of 1 (each tap added in (ky, kx) order, padding adding 0),
// then divided, as average_plane does.
void average_blocks(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx)
{
    const DepthwiseKernel& kern = depthwise_kernel();
    const Depthwise2dGeometry dg = window_geometry(g, 0.f);
    const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
    const std::vector<float> ones(static_cast<size_t>(kern.block * g.kernel_h * g.kernel_w), 1.f);
    const std::vector<float> divisor = average_divisors(g);
    blocks_then_planes(x, g, y, ctx, dg.block_scratch_floats(kern.block), [&](int64_t c0, float* scratch) {
        float* out = y.data<float>() + c0 * out_plane;
        kern.channels(dg, {x.data<float>() + c0 * in_plane, in_plane, kern.block}, ones.data(), nullptr,
                      {out, out_plane, kern.block}, scratch);
        for (int64_t c = 0; c < kern.block; ++c)
            for (int64_t p = 0; p < out_plane; ++p) {
                float& v = out[c * out_plane + p];
                v = divisor[p] > 0.f ? v / divisor[p] : 0.f;
            }
    }, average_plane);
}

} // namespace

void max_pool2d(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx)
{
    if (is_whole_plane(g) && x.dtype() == DType::F32 && g.in_h * g.in_w > 0)
        return whole_float_planes(x, g, y, ctx, false, 0.f);
    if (max_takes_rows(x, g)) return max_rows(x, g, y, ctx);
    if (takes_blocks(x, g)) return max_blocks(x, g, y, ctx);
    if (x.dtype() == DType::I8)
        each_plane<int8_t>(x, g, y, ctx, int8_max_pool_kernel(g).plane);
    else
        each_plane<float>(x, g, y, ctx, max_plane<float>);
}


void average_pool2d(const Tensor& x, const Pool2dGeometry& g, Tensor& y, const ParallelContext& ctx)
{
    const bool counted = g.count_include_pad || (g.count_y0 <= 0 && g.count_x0 <= 0 && g.count_y1 >= g.in_h &&
                                                 g.count_x1 >= g.in_w);
    if (is_whole_plane(g) && counted && g.in_h * g.in_w > 0)
        return whole_float_planes(x, g, y, ctx, true, static_cast<float>(g.kernel_h * g.kernel_w));
    if (takes_blocks(x, g)) return average_blocks(x, g, y, ctx);
    each_plane<float>(x, g, y, ctx, average_plane);
}

bool max_pool2d_blocks_supported(const Pool2dGeometry& g)
{
    return g.in_h * g.in_w > 0 && g.out_h * g.out_w > 0 && window_geometry(g, 0.f).supported();
}

void max_pool2d_blocks(const float* x, bool x_blocked, int64_t channels, const Pool2dGeometry& g, float* y,
                       bool y_blocked, const ParallelContext& ctx)
{
    windows_by_blocks(window_geometry(g, lowest<float>()), channels, WindowReduce::Max, nullptr, nullptr, x, x_blocked,
                      y, y_blocked, {}, ctx);
}

void global_pool_blocked(const float* x, int64_t channels, int64_t pixels, bool average, float* y,
                         const ParallelContext& ctx)
{
    constexpr int64_t kMaxBlock = 64;
    const int64_t block = channel_block(), blocks = (channels + block - 1) / block;
    check(block <= kMaxBlock, "internal: channel blocks of ", block, " floats");
    const float divisor = static_cast<float>(pixels);
    ctx.parallel_for(blocks, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
            const float* v = x + b * pixels * block;
            float acc[kMaxBlock];
            // A maximum starts from the first value (taken again below: no change), a sum from 0.
            for (int64_t l = 0; l < block; ++l) acc[l] = average || pixels == 0 ? 0.f : v[l];
            for (int64_t p = 0; p < pixels; ++p, v += block)
                for (int64_t l = 0; l < block; ++l) acc[l] = average ? acc[l] + v[l] : std::max(acc[l], v[l]);
            const int64_t lanes = std::min(block, channels - b * block);
            for (int64_t l = 0; l < lanes; ++l) y[b * block + l] = average ? acc[l] / divisor : acc[l];
        }
    });
}

} // namespace kestrel
