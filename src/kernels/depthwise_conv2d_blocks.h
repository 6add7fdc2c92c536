// The depthwise kernel over blocks of channels (depthwise_conv2d.h), written
// once for every ISA: a file under kernels/<isa>/ instantiates
// depthwise_block<VectorOf<width>>.
//
// Max pooling takes the same path with the maximum for the sum.
//
// Small planes (14x14, 7x7) fill few vectors along their rows; across
// channels every vector is full, as in ncnn's packed layouts. A block of
// V::width channels is transposed once into a padded [row][column][channel]
// copy (or copied, when it is stored in channel blocks already), each output
// pixel is one vector of channels summed over the taps (4 pixels at a time,
// independent accumulators), and the pixels are transposed back, V::width at
// a time in registers, into the output planes (or stored as they are into a
// blocked output). Every
// output is the bias plus the taps in (ky, kx) order by multiply-adds, as in
// the rows kernel, so both give the same bits.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

#include "kernels/depthwise_conv2d.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel {
namespace detail {
namespace {

// `count` (<= W) floats from p, zero after them.
template <class V> inline typename V::vec load_first(const float* p, int64_t count)
{
    if (count == V::width) return V::load(p);
    float lanes[V::width] = {};
    std::memcpy(lanes, p, sizeof(float) * static_cast<size_t>(count));
    return V::load(lanes);
}

template <class V> inline void store_first(float* p, typename V::vec v, int64_t count)
{
    if (count == V::width) return V::store(p, v);
    float lanes[V::width];
    V::store(lanes, v);
    std::memcpy(p, lanes, sizeof(float) * static_cast<size_t>(count));
}

// The block's channels of the padded plane the outputs read, as
// dst[(r * padded_w + c) * W + channel]: the padding filled in, the input
// copied row by row when it is blocked, else transposed from its planes W
// pixels at a time.
template <class V> void pack_padded_block(const Depthwise2dGeometry& g, ChannelBlockIn in, float* dst)
{
    constexpr int64_t W = V::width;
    using vec = typename V::vec;
    const int64_t pw = g.padded_w(), ph = g.padded_h();
    const vec pad = V::set1(g.pad_value);
    auto fill = [&](int64_t r, int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) V::store(dst + (r * pw + c) * W, pad);
    };
    // The columns [c0, c1) and rows [r0, r1) that hold input values.
    const int64_t c0 = std::clamp<int64_t>(g.pad_left, 0, pw), c1 = std::clamp<int64_t>(g.pad_left + g.in_w, c0, pw);
    const int64_t r0 = std::clamp<int64_t>(g.pad_top, 0, ph), r1 = std::clamp<int64_t>(g.pad_top + g.in_h, r0, ph);
    for (int64_t r = 0; r < ph; ++r) {
        if (r < r0 || r >= r1) {
            fill(r, 0, pw);
            continue;
        }
        fill(r, 0, c0);
        fill(r, c1, pw);
    }
    if (in.blocked) {
        for (int64_t r = r0; r < r1; ++r)
            std::memcpy(dst + (r * pw + c0) * W, in.data + ((r - g.pad_top) * g.in_w + c0 - g.pad_left) * W,
                        sizeof(float) * static_cast<size_t>((c1 - c0) * W));
        return;
    }
    // The input pixels r0..r1 x c0..c1 in runs of W along the plane.
    const int64_t first = (r0 - g.pad_top) * g.in_w, last = (r1 - 1 - g.pad_top) * g.in_w + g.in_w;
    int64_t y = r0 - g.pad_top, x = 0;
    for (int64_t q = first; q < last; q += W) {
        const int64_t count = std::min(W, last - q);
        vec v[W];
        for (int64_t ch = 0; ch < W; ++ch)
            v[ch] = ch < in.lanes ? load_first<V>(in.data + ch * in.plane + q, count) : V::set1(0.f);
        transpose_square<V>(v);
        for (int64_t j = 0; j < count; ++j) {
            const int64_t c = x + g.pad_left;
            if (c >= c0 && c < c1) V::store(dst + ((y + g.pad_top) * pw + c) * W, v[j]);
            if (++x == g.in_w) x = 0, ++y;
        }
    }
}

// N pixels of a row of the block (`step` floats apart in the padded copy),
// into blocked outputs.
template <class V, WindowReduce R, int N>
inline void block_pixels(const float* src, int64_t step, const int64_t* offset, int64_t taps, const float* weights,
                         typename V::vec start, float* out)
{
    using vec = typename V::vec;
    vec acc[N];
    for (int j = 0; j < N; ++j) acc[j] = start;
    for (int64_t t = 0; t < taps; ++t) {
        const float* s = src + offset[t];
        if constexpr (R == WindowReduce::Max) {
            for (int j = 0; j < N; ++j) {
                const vec x = V::load(s + j * step);
                acc[j] = acc[j] < x ? x : acc[j];
            }
        } else {
            const vec w = V::load(weights + t * V::width);
            for (int j = 0; j < N; ++j) acc[j] = V::fmadd(w, V::load(s + j * step), acc[j]);
        }
    }
    for (int j = 0; j < N; ++j) V::store(out + j * V::width, acc[j]);
}

// Each output starts from start[channel], or (no start) from `fill`. (Not a
// vector argument: a function taking one by value returns without vzeroupper,
// and the SSE code after it then runs 2-3x slower; see vector_of.h.)
template <class V, WindowReduce R>
void window_block(const Depthwise2dGeometry& g, ChannelBlockIn in, const float* weights, const float* start_values,
                  float fill, ChannelBlockOut out, float* scratch)
{
    constexpr int64_t W = V::width;
    using vec = typename V::vec;
    const vec start = start_values ? V::load(start_values) : V::set1(fill);
    const int64_t pw = g.padded_w(), taps = g.kh * g.kw, n = g.out_h * g.out_w;
    float* padded = scratch;
    // [pixel][channel]: the output itself when it is blocked.
    float* results = out.blocked ? out.data : scratch + g.padded_h() * pw * W;
    pack_padded_block<V>(g, in, padded);
    int64_t offset[kMaxDepthwiseTaps];
    for (int64_t ky = 0; ky < g.kh; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx) offset[ky * g.kw + kx] = (ky * g.dilation_h * pw + kx * g.dilation_w) * W;
    const int64_t step = g.stride_w * W;
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const float* row = padded + oy * g.stride_h * pw * W;
        float* orow = results + oy * g.out_w * W;
        int64_t ox = 0;
        for (; ox + 4 <= g.out_w; ox += 4)
            block_pixels<V, R, 4>(row + ox * step, step, offset, taps, weights, start, orow + ox * W);
        for (; ox < g.out_w; ++ox)
            block_pixels<V, R, 1>(row + ox * step, step, offset, taps, weights, start, orow + ox * W);
    }
    if (out.blocked) return;
    // Back to planes, W pixels at a time.
    for (int64_t p = 0; p < n; p += W) {
        const int64_t count = std::min(W, n - p);
        vec v[W];
        for (int64_t j = 0; j < W; ++j) v[j] = V::load(results + (p + std::min(j, count - 1)) * W);
        transpose_square<V>(v);
        for (int64_t ch = 0; ch < out.lanes; ++ch) store_first<V>(out.data + ch * out.plane + p, v[ch], count);
    }
}

// Whole planes of a block of channels (global pooling): W values of each plane
// at a time, transposed so that one vector holds a position of every plane,
// folded into the channels' running sums (or maxima) in order.
template <class V, WindowReduce R> void whole_block(const float* in, int64_t in_plane, int64_t n, float* out)
{
    constexpr int64_t W = V::width;
    using vec = typename V::vec;
    float first[W];
    for (int64_t ch = 0; ch < W; ++ch) first[ch] = n > 0 ? in[ch * in_plane] : 0.f;
    // A maximum starts from the first value (taken again below: no change).
    vec acc = R == WindowReduce::Max ? V::load(first) : V::set1(0.f);
    for (int64_t q = 0; q < n; q += W) {
        const int64_t count = std::min(W, n - q);
        vec v[W];
        for (int64_t ch = 0; ch < W; ++ch) v[ch] = load_first<V>(in + ch * in_plane + q, count);
        transpose_square<V>(v);
        for (int64_t j = 0; j < count; ++j) {
            if constexpr (R == WindowReduce::Max)
                acc = acc < v[j] ? v[j] : acc;
            else
                acc = acc + v[j];
        }
    }
    V::store(out, acc);
}

template <class V> void whole_sums(const float* in, int64_t in_plane, int64_t n, float* out)
{
    whole_block<V, WindowReduce::WeightedSum>(in, in_plane, n, out);
}

template <class V> void whole_maxima(const float* in, int64_t in_plane, int64_t n, float* out)
{
    whole_block<V, WindowReduce::Max>(in, in_plane, n, out);
}

template <class V>
void depthwise_block(const Depthwise2dGeometry& g, ChannelBlockIn in, const float* weights, const float* bias,
                     ChannelBlockOut out, float* scratch)
{
    window_block<V, WindowReduce::WeightedSum>(g, in, weights, bias, 0.f, out, scratch);
}

// The windows' maxima (pad_value: the lowest value), from the lowest value.
template <class V> void max_block(const Depthwise2dGeometry& g, ChannelBlockIn in, ChannelBlockOut out, float* scratch)
{
    window_block<V, WindowReduce::Max>(g, in, nullptr, nullptr, g.pad_value, out, scratch);
}

} // namespace
} // namespace detail
} // namespace kestrel
