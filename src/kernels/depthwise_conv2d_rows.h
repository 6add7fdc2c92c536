// The depthwise plane kernel (depthwise_conv2d.h), written once for every ISA:
// a file under kernels/<isa>/ instantiates depthwise_plane<VectorOf<width>>
// (vector_of.h), compiled with that ISA's flags.
//
// Each output row is computed in strips of 4 vectors (independent accumulators
// hide the FMA latency), then single vectors, the last one overlapping the one
// before. Planes with rows narrower than a vector are computed as one long row.
// Every output starts from the bias and adds the taps in (ky, kx) order.
//
// A row with a stride is computed at stride 1 and every stride-th value kept:
// stride times the multiply-adds, but every load contiguous and no copy of the
// row split into stride phases. 3x3 and 5x5 kernels without dilation (most
// depthwise layers) take depthwise_k_rows instead: weights held in registers,
// and a stride of 2 along the row taken by splitting even and odd inputs.
#pragma once
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/depthwise_conv2d.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel {
namespace detail {
namespace {

// N vectors of outputs from x on: src[t] + x is where tap t reads them.
template <class V, int N>
void depthwise_strip(const float* const* src, int64_t x, const float* weights, int taps, float bias, float* out)
{
    using vec = typename V::vec;
    vec acc[N];
#pragma GCC unroll 4
    for (int j = 0; j < N; ++j) acc[j] = V::set1(bias);
    for (int t = 0; t < taps; ++t) {
        const vec w = V::set1(weights[t]);
        const float* s = src[t] + x;
#pragma GCC unroll 4
        for (int j = 0; j < N; ++j) acc[j] = V::fmadd(w, V::load(s + j * V::width), acc[j]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < N; ++j) V::store(out + j * V::width, acc[j]);
}

// out[x] for x in [0, n): bias + sum over t of weights[t] * rows[t][offset[t] + x].
template <class V>
void depthwise_line(const float* const* rows, const int64_t* offset, const float* weights, int64_t taps, float bias,
                    float* out, int64_t n)
{
    constexpr int64_t W = V::width;
    const float* src[kMaxDepthwiseTaps];
    for (int64_t t = 0; t < taps; ++t) src[t] = rows[t] + offset[t];
    auto strip = [&](auto vectors, int64_t x) {
        depthwise_strip<V, decltype(vectors)::value>(src, x, weights, static_cast<int>(taps), bias, out + x);
    };
    int64_t x = 0;
    for (; x + 4 * W <= n; x += 4 * W) strip(std::integral_constant<int, 4>{}, x);
    for (; x + W <= n; x += W) strip(std::integral_constant<int, 1>{}, x);
    if (x == n) return;
    if (n >= W) {
        // The last vector again, overlapping: the outputs it repeats get the same bits.
        strip(std::integral_constant<int, 1>{}, n - W);
        return;
    }
    for (; x < n; ++x) {
        float acc = bias;
        for (int64_t t = 0; t < taps; ++t) acc = weights[t] * src[t][x] + acc;
        out[x] = acc;
    }
}

// Padded row r of the plane (padded_w values): a pointer into the input when
// the row needs no padding, else a copy in `buf` with the padding filled in.
inline const float* padded_row(const Depthwise2dGeometry& g, const float* in, int64_t r, float* buf)
{
    const int64_t pw = g.padded_w(), src_row = r - g.pad_top;
    if (src_row < 0 || src_row >= g.in_h) {
        std::fill(buf, buf + pw, g.pad_value);
        return buf;
    }
    // Columns [c0, c1) come from the input (column c is input column c - pad_left).
    const int64_t c0 = std::min(pw, std::max<int64_t>(0, g.pad_left));
    const int64_t c1 = std::min(pw, std::max(c0, g.pad_left + g.in_w));
    const float* row = in + src_row * g.in_w;
    if (c0 == 0 && c1 == pw) return row - g.pad_left; // pad_left <= 0 here
    std::fill(buf, buf + c0, g.pad_value);
    if (c1 > c0) std::copy(row + (c0 - g.pad_left), row + (c1 - g.pad_left), buf + c0);
    std::fill(buf + c1, buf + pw, g.pad_value);
    return buf;
}

// The padded rows of the taps, each made once: consecutive output rows share
// rows, and cached_rows() slots (row r in slot r % slots) hold every row one
// output row reads and the next one's new rows.
class PaddedRows {
public:
    PaddedRows(const Depthwise2dGeometry& g, const float* in, float* buf) : g_(g), in_(in), buf_(buf)
    {
        std::fill(row_in_slot_, row_in_slot_ + kMaxDepthwiseRows, -1);
    }
    const float* get(int64_t r)
    {
        const int64_t slot = r % g_.cached_rows();
        if (row_in_slot_[slot] != r) {
            row_in_slot_[slot] = r;
            ptr_[slot] = padded_row(g_, in_, r, buf_ + slot * g_.padded_w());
        }
        return ptr_[slot];
    }

private:
    const Depthwise2dGeometry& g_;
    const float* in_;
    float* buf_;
    int64_t row_in_slot_[kMaxDepthwiseRows];
    const float* ptr_[kMaxDepthwiseRows];
};

// Lanes Offset, Offset + 2, ... of the concatenation a:b.
template <int Offset, class Vec, size_t... I> inline Vec every_other(Vec a, Vec b, std::index_sequence<I...>)
{
    return __builtin_shufflevector(a, b, (2 * I + Offset)...);
}

// The K taps along a row for V::width outputs from output x: t[kx] holds
// row[SW * (x + i) + kx] in lane i. With stride 2, taps kx and kx + 1 (kx
// even) are the even and odd lanes of one pair of loads.
template <class V, int K, int SW> inline void row_taps(const float* row, int64_t x, typename V::vec (&t)[K])
{
    if constexpr (SW == 1) {
        for (int kx = 0; kx < K; ++kx) t[kx] = V::load(row + x + kx);
    } else {
        using lanes = std::make_index_sequence<V::width>;
        const float* p = row + 2 * x;
        for (int kx = 0; kx < K; kx += 2) {
            const typename V::vec a = V::load(p + kx), b = V::load(p + kx + V::width);
            t[kx] = every_other<0>(a, b, lanes{});
            if (kx + 1 < K) t[kx + 1] = every_other<1>(a, b, lanes{});
        }
    }
}

// N vectors of outputs of one row from output x on, each the start value
// combined with the K x K taps in (ky, kx) order: by multiply-adds, as in
// depthwise_strip, or by maxima.
template <class V, WindowReduce R, int K, int SW, int N>
inline void strip_k(const float* const (&rows)[K], int64_t x, const typename V::vec (&w)[K * K],
                    typename V::vec start, float* out)
{
    using vec = typename V::vec;
    vec acc[N];
    for (int j = 0; j < N; ++j) acc[j] = start;
    for (int ky = 0; ky < K; ++ky)
        for (int j = 0; j < N; ++j) {
            vec t[K];
            row_taps<V, K, SW>(rows[ky], x + j * V::width, t);
            for (int kx = 0; kx < K; ++kx) {
                if constexpr (R == WindowReduce::Max)
                    acc[j] = acc[j] < t[kx] ? t[kx] : acc[j];
                else
                    acc[j] = V::fmadd(w[ky * K + kx], t[kx], acc[j]);
            }
        }
    for (int j = 0; j < N; ++j) V::store(out + j * V::width, acc[j]);
}

// One output of strip_k without vectors.
template <WindowReduce R, int K, int SW>
inline float window_k(const float* const (&rows)[K], int64_t x, const float* weights, float start)
{
    float acc = start;
    for (int t = 0; t < K * K; ++t) {
        const float v = rows[t / K][x * SW + t % K];
        if constexpr (R == WindowReduce::Max)
            acc = acc < v ? v : acc;
        else
            acc = weights[t] * v + acc;
    }
    return acc;
}

// K x K (2, 3 or 5), no dilation, stride SW (1 or 2) along the rows: each
// output the start value combined with its taps (weights: K * K values for a
// weighted sum). Rows narrower than a vector are done without vectors.
template <class V, WindowReduce R, int K, int SW>
void window_k_rows(const Depthwise2dGeometry& g, const float* in, const float* weights, float start, float* out,
                   float* scratch)
{
    using vec = typename V::vec;
    constexpr int64_t W = V::width;
    vec w[K * K];
    for (int t = 0; t < K * K; ++t) w[t] = V::set1(R == WindowReduce::Max ? 0.f : weights[t]);
    const vec s = V::set1(start);
    PaddedRows padded(g, in, scratch);
    // Outputs [0, vec_end) in vectors (the last one overlapping the one before
    // when needed); with stride 2 a vector reads one value past its last tap,
    // so the row's last output is computed alone.
    const int64_t extra = SW == 1 ? 0 : 1;
    const int64_t vec_end = g.out_w >= W + extra ? g.out_w - extra : 0;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const float* rows[K];
        for (int ky = 0; ky < K; ++ky) rows[ky] = padded.get(oy * g.stride_h + ky);
        float* orow = out + oy * g.out_w;
        int64_t x = 0;
        for (; x + 2 * W <= vec_end; x += 2 * W) strip_k<V, R, K, SW, 2>(rows, x, w, s, orow + x);
        for (; x + W <= vec_end; x += W) strip_k<V, R, K, SW, 1>(rows, x, w, s, orow + x);
        if (x < vec_end) strip_k<V, R, K, SW, 1>(rows, vec_end - W, w, s, orow + vec_end - W);
        for (x = vec_end; x < g.out_w; ++x) orow[x] = window_k<R, K, SW>(rows, x, weights, start);
    }
}

template <class V, int K, int SW>
void depthwise_k_rows(const Depthwise2dGeometry& g, const float* in, const float* weights, float bias, float* out,
                      float* scratch)
{
    window_k_rows<V, WindowReduce::WeightedSum, K, SW>(g, in, weights, bias, out, scratch);
}

// Max pooling by rows (max_plane_supported(g)): each output the maximum of
// its taps from the lowest value (pad_value).
template <class V> void max_plane(const Depthwise2dGeometry& g, const float* in, float* out, float* scratch)
{
    constexpr WindowReduce M = WindowReduce::Max;
    const bool s1 = g.stride_w == 1;
    if constexpr (V::width > 4)
        if (g.out_w < V::width + (s1 ? 0 : 1)) return max_plane<VectorOf<V::width / 2>>(g, in, out, scratch);
    if (g.kh == 2)
        (s1 ? window_k_rows<V, M, 2, 1> : window_k_rows<V, M, 2, 2>)(g, in, nullptr, g.pad_value, out, scratch);
    else
        (s1 ? window_k_rows<V, M, 3, 1> : window_k_rows<V, M, 3, 2>)(g, in, nullptr, g.pad_value, out, scratch);
}

// The K x K rows kernels by kernel size and stride.
template <class V>
void depthwise_k_plane(const Depthwise2dGeometry& g, const float* in, const float* weights, float bias, float* out,
                       float* scratch)
{
    if (g.kh == 3)
        (g.stride_w == 1 ? depthwise_k_rows<V, 3, 1> : depthwise_k_rows<V, 3, 2>)(g, in, weights, bias, out, scratch);
    else
        (g.stride_w == 1 ? depthwise_k_rows<V, 5, 1> : depthwise_k_rows<V, 5, 2>)(g, in, weights, bias, out, scratch);
}

template <class V>
void depthwise_plane(const Depthwise2dGeometry& g, const float* in, const float* weights, float bias, float* out,
                     float* scratch)
{
    constexpr int64_t W = V::width;
    if ((g.kh == 3 || g.kh == 5) && g.kw == g.kh && g.dilation_h == 1 && g.dilation_w == 1 && g.stride_w <= 2) {
        if (g.out_w >= W + (g.stride_w == 2 ? 1 : 0)) {
            depthwise_k_plane<V>(g, in, weights, bias, out, scratch);
            return;
        }
        // 3x3 rows narrower than this vector (14x14, 7x7 planes): half-width
        // vectors. (5x5 ones are faster as one long row, below.)
        if constexpr (W > 4)
            if (g.kh == 3) return depthwise_plane<VectorOf<W / 2>>(g, in, weights, bias, out, scratch);
    }
    const int64_t taps = g.kh * g.kw, pw = g.padded_w(), ph = g.padded_h();
    const float* rows[kMaxDepthwiseTaps];
    int64_t offset[kMaxDepthwiseTaps];
    if (g.out_w < W) {
        // Rows narrower than a vector: the stride-1 convolution of the padded
        // plane seen as one long row (a tap is a fixed offset in it; positions
        // that wrap past a row's end are never kept), then the outputs picked.
        for (int64_t r = 0; r < ph; ++r) {
            float* dst = scratch + r * pw;
            const float* row = padded_row(g, in, r, dst);
            if (row != dst) std::copy(row, row + pw, dst);
        }
        const int64_t full_h = ph - (g.kh - 1) * g.dilation_h, full_w = pw - (g.kw - 1) * g.dilation_w;
        const int64_t line = (full_h - 1) * pw + full_w; // its last read is the plane's last value
        for (int64_t ky = 0; ky < g.kh; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx) {
                rows[ky * g.kw + kx] = scratch + ky * g.dilation_h * pw;
                offset[ky * g.kw + kx] = kx * g.dilation_w;
            }
        float* full = scratch + ph * pw;
        depthwise_line<V>(rows, offset, weights, taps, bias, full, line);
        for (int64_t oy = 0; oy < g.out_h; ++oy)
            for (int64_t ox = 0; ox < g.out_w; ++ox)
                out[oy * g.out_w + ox] = full[oy * g.stride_h * pw + ox * g.stride_w];
        return;
    }
    // Row by row; with a stride along the row, the row at stride 1 first.
    PaddedRows padded(g, in, scratch);
    float* line = scratch + g.cached_rows() * pw;
    const int64_t sw = g.stride_w, line_len = (g.out_w - 1) * sw + 1;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        for (int64_t ky = 0; ky < g.kh; ++ky) {
            const float* row = padded.get(oy * g.stride_h + ky * g.dilation_h);
            for (int64_t kx = 0; kx < g.kw; ++kx) {
                rows[ky * g.kw + kx] = row;
                offset[ky * g.kw + kx] = kx * g.dilation_w;
            }
        }
        float* orow = out + oy * g.out_w;
        if (sw == 1) {
            depthwise_line<V>(rows, offset, weights, taps, bias, orow, g.out_w);
            continue;
        }
        depthwise_line<V>(rows, offset, weights, taps, bias, line, line_len);
        for (int64_t ox = 0; ox < g.out_w; ++ox) orow[ox] = line[ox * sw];
    }
}

} // namespace
} // namespace detail
} // namespace kestrel
