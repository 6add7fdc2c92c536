// Reference kernels for N-d sliding windows (see sliding_window.h). Every kernel
// walks a grid of window starts with an odometer and visits the taps of each
// window through one tap table, so one code path serves every rank.
#include "ops/common/sliding_window.h"

#include <algorithm>
#include <limits>
#include <string>
#include <type_traits>

#include "core/dtype_dispatch.h"

namespace kestrel::window {

Span same_pads(int64_t in, int64_t stride, int64_t extent, bool upper)
{
    const int64_t total = std::max<int64_t>(0, (in + stride - 1) / stride * stride - stride + extent - in);
    Span p;
    p.begin = upper ? total / 2 : total - total / 2;
    p.end = total - p.begin;
    return p;
}

int64_t window_count(int64_t padded, int64_t extent, int64_t stride)
{
    return padded >= extent ? (padded - extent) / stride + 1 : 0;
}

Shape spatial_dims(const Shape& s) { return Shape(s.begin() + 1, s.end()); }

Shape output_dims(const std::vector<Axis>& axes)
{
    Shape d;
    for (const Axis& a : axes) d.push_back(a.out);
    return d;
}

int64_t kernel_size(const std::vector<Axis>& axes)
{
    int64_t n = 1;
    for (const Axis& a : axes) n *= a.kernel;
    return n;
}

NcnnWindow read_ncnn_window(const ParamDict& pd, int rank, const NcnnWindowIds& ids, bool kernel_required)
{
    check(rank >= 1 && rank <= 3, "ncnn windows have 1 to 3 axes, got ", rank);
    NcnnWindow w;
    const int kernel_w = pd.get_int(ids.kernel, 0);
    const int stride_w = pd.get_int(ids.stride, 1);
    const int dilation_w = ids.dilation < 0 ? 1 : pd.get_int(ids.dilation, 1);
    const int pad_left = pd.get_int(ids.pad_begin, 0);
    bool all_upper = true, all_lower = true, all_explicit = true;
    std::string pads_read; // "id=value ..." for the error message
    const size_t n = static_cast<size_t>(rank);
    w.kernel.resize(n), w.stride.resize(n), w.dilation.resize(n), w.pads.resize(n);
    // In ncnn's order, so that a bad w value (which h and d default to) is reported as itself.
    for (int i = 0; i < rank; ++i) { // ncnn axis i; ours rank-1-i
        const int k = i == 0 ? kernel_w : pd.get_int(ids.kernel + 10 * i, kernel_w);
        const int s = i == 0 ? stride_w : pd.get_int(ids.stride + 10 * i, stride_w);
        const int d = i == 0 || ids.dilation < 0 ? dilation_w : pd.get_int(ids.dilation + 10 * i, dilation_w);
        const char axis = "whd"[i]; // ncnn's names: kernel_w, stride_h, ...
        check(kernel_required ? k > 0 : k >= 0, "kernel_", axis, " (param ", ids.kernel + 10 * i,
              ") must be > 0, got ", k);
        check(s > 0, "stride_", axis, " (param ", ids.stride + 10 * i, ") must be > 0, got ", s);
        check(d > 0, "dilation_", axis, " (param ", ids.dilation + 10 * i, ") must be > 0, got ", d);
        Span p;
        p.begin = i == 0 ? pad_left : pd.get_int(ids.pad_begin + 10 * i, pad_left);
        p.end = pd.get_int(ids.pad_end + i, static_cast<int>(p.begin));
        pads_read += (i == 0 ? "" : " ") + std::to_string(ids.pad_begin + 10 * i) + "=" + std::to_string(p.begin) +
                     " " + std::to_string(ids.pad_end + i) + "=" + std::to_string(p.end);
        for (int64_t v : {p.begin, p.end}) {
            all_upper = all_upper && v == kSameUpper;
            all_lower = all_lower && v == kSameLower;
            all_explicit = all_explicit && v >= 0;
        }
        const size_t ours = n - 1 - static_cast<size_t>(i);
        w.kernel[ours] = k, w.stride[ours] = s, w.dilation[ours] = d, w.pads[ours] = p;
    }
    check(all_upper || all_lower || all_explicit,
          "pads must all be >= 0, or all -233 (SAME_UPPER), or all -234 (SAME_LOWER); got ", pads_read);
    w.same = all_upper ? kSameUpper : all_lower ? kSameLower : 0;
    return w;
}

namespace {

// The per-axis offset (kernel index * dilation) of every tap, tap-major in
// row-major kernel order, so tap t pairs with weight t of a kernel.
struct Taps {
    explicit Taps(const std::vector<Axis>& axes) : rank(axes.size()), count(kernel_size(axes))
    {
        offsets.resize(static_cast<size_t>(count) * rank);
        for (int64_t t = 0; t < count; ++t) {
            int64_t rest = t;
            for (size_t a = rank; a-- > 0;) {
                offsets[static_cast<size_t>(t) * rank + a] = rest % axes[a].kernel * axes[a].dilation;
                rest /= axes[a].kernel;
            }
        }
    }

    // fn(tap, flat) for each tap of the window whose first tap is at `start`:
    // flat is the tap's row-major position in a grid of `dims`, or -1 outside it.
    template <class Fn> void visit(const int64_t* start, const Shape& dims, Fn&& fn) const
    {
        for (int64_t t = 0; t < count; ++t) {
            const int64_t* off = &offsets[static_cast<size_t>(t) * rank];
            int64_t flat = 0;
            bool inside = true;
            for (size_t a = 0; a < rank && inside; ++a) {
                const int64_t c = start[a] + off[a];
                inside = c >= 0 && c < dims[a];
                flat = flat * dims[a] + c;
            }
            fn(t, inside ? flat : -1);
        }
    }

    size_t rank;
    int64_t count;
    std::vector<int64_t> offsets;
};

// fn(position, start) for every position of `grid` in row-major order; the
// window of position p starts at p*stride - pad_begin along each axis.
template <class Fn> void for_each_window(const Shape& grid, const std::vector<Axis>& axes, Fn&& fn)
{
    const size_t rank = axes.size();
    std::vector<int64_t> pos(rank, 0), start(rank);
    for (size_t a = 0; a < rank; ++a) start[a] = -axes[a].pad_begin;
    const int64_t total = shape_numel(grid);
    for (int64_t p = 0; p < total; ++p) {
        fn(p, start.data());
        for (size_t a = rank; a-- > 0;) {
            if (++pos[a] < grid[a]) {
                start[a] += axes[a].stride;
                break;
            }
            pos[a] = 0;
            start[a] = -axes[a].pad_begin;
        }
    }
}

// Row-major flat position in `dims` -> the position with the axes reversed
// (column-major: the first axis varies fastest).
int64_t column_major(int64_t flat, const Shape& dims)
{
    std::vector<int64_t> coord(dims.size());
    for (size_t a = dims.size(); a-- > 0;) {
        coord[a] = flat % dims[a];
        flat /= dims[a];
    }
    int64_t out = 0;
    for (size_t a = dims.size(); a-- > 0;) out = out * dims[a] + coord[a];
    return out;
}

} // namespace

namespace {

// Grouped channel geometry shared by convolution and deconvolution: output
// channel oc reads the inch_g input planes of its group.
struct GroupedPlanes {
    GroupedPlanes(const Tensor& x, const Tensor& y, int64_t group, const std::vector<Axis>& axes)
        : in_dims(spatial_dims(x.shape())), out_dims(output_dims(axes)), taps(axes), in_plane(shape_numel(in_dims)),
          out_plane(shape_numel(out_dims)), inch_g(x.dim(0) / group), out_per_group(y.dim(0) / group)
    {
    }
    // The first input plane of output channel oc's group.
    int64_t first_input_plane(int64_t oc) const { return oc / out_per_group * inch_g; }

    Shape in_dims, out_dims;
    Taps taps;
    int64_t in_plane, out_plane, inch_g, out_per_group;
};

} // namespace

void conv_forward(const Tensor& x, const float* weight, const float* bias, int64_t group,
                  const std::vector<Axis>& axes, float pad_value, Tensor& y, const ExecContext& ctx)
{
    const GroupedPlanes g(x, y, group, axes);
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    ctx.parallel_for(y.dim(0), [&](int64_t begin, int64_t end) {
        for (int64_t oc = begin; oc < end; ++oc) {
            const float* in_group = src + g.first_input_plane(oc) * g.in_plane;
            const float* w_oc = weight + oc * g.inch_g * g.taps.count;
            float* o = dst + oc * g.out_plane;
            for_each_window(g.out_dims, axes, [&](int64_t p, const int64_t* start) {
                float sum = bias ? bias[oc] : 0.f;
                for (int64_t ic = 0; ic < g.inch_g; ++ic) {
                    const float* plane = in_group + ic * g.in_plane;
                    const float* w = w_oc + ic * g.taps.count;
                    g.taps.visit(start, g.in_dims,
                                 [&](int64_t t, int64_t at) { sum += w[t] * (at >= 0 ? plane[at] : pad_value); });
                }
                o[p] = sum;
            });
        }
    });
}

void deconv_forward(const Tensor& x, const float* weight, const float* bias, int64_t group,
                    const std::vector<Axis>& axes, Tensor& y, const ExecContext& ctx)
{
    const GroupedPlanes g(x, y, group, axes);
    const float* src = x.data<float>();
    float* dst = y.data<float>();
    ctx.parallel_for(y.dim(0), [&](int64_t begin, int64_t end) {
        for (int64_t oc = begin; oc < end; ++oc) {
            float* o = dst + oc * g.out_plane;
            std::fill(o, o + g.out_plane, bias ? bias[oc] : 0.f);
            for (int64_t ic = 0; ic < g.inch_g; ++ic) {
                const float* plane = src + (g.first_input_plane(oc) + ic) * g.in_plane;
                const float* w = weight + (oc * g.inch_g + ic) * g.taps.count;
                // Scatter: input position p spreads over the window it starts in the output.
                for_each_window(g.in_dims, axes, [&](int64_t p, const int64_t* start) {
                    const float v = plane[p];
                    g.taps.visit(start, g.out_dims, [&](int64_t t, int64_t at) {
                        if (at >= 0) o[at] += v * w[t];
                    });
                });
            }
        }
    });
}

void deconv_weight_from_onnx(const float* src, int64_t in_channels, int64_t out_per_group, int64_t group,
                             int64_t ksize, float* dst)
{
    const int64_t inch_g = in_channels / group;
    for (int64_t g = 0; g < group; ++g)
        for (int64_t m = 0; m < out_per_group; ++m)
            for (int64_t c = 0; c < inch_g; ++c)
                std::copy_n(src + ((g * inch_g + c) * out_per_group + m) * ksize, ksize,
                            dst + ((g * out_per_group + m) * inch_g + c) * ksize);
}

void max_pool(const Tensor& x, const std::vector<Axis>& axes, PoolConvention convention, Tensor& y, Tensor* indices,
              int64_t index_base, bool column_major_indices, const ExecContext& ctx)
{
    const Shape in_dims = spatial_dims(x.shape()), out_dims = output_dims(axes);
    const Taps taps(axes);
    const int64_t in_plane = shape_numel(in_dims), out_plane = shape_numel(out_dims);
    const bool pads_fold_in = convention == PoolConvention::Ncnn;
    visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
            ctx.parallel_for(x.dim(0), [&](int64_t begin, int64_t end) {
                for (int64_t c = begin; c < end; ++c) {
                    const T* plane = x.data<T>() + c * in_plane;
                    T* o = y.data<T>() + c * out_plane;
                    for_each_window(out_dims, axes, [&](int64_t p, const int64_t* start) {
                        T best = std::numeric_limits<T>::lowest();
                        int64_t best_at = -1;
                        taps.visit(start, in_dims, [&](int64_t t, int64_t at) {
                            if (pads_fold_in) {
                                const T v = at >= 0 ? plane[at] : std::numeric_limits<T>::lowest();
                                best = t == 0 ? v : std::max(best, v);
                            } else if (at >= 0 && (best_at < 0 || plane[at] > best)) {
                                best = plane[at], best_at = at;
                            }
                        });
                        o[p] = best;
                        if (!indices) return;
                        const int64_t at = std::max<int64_t>(best_at, 0);
                        indices->data<int64_t>()[c * out_plane + p] =
                            index_base + c * in_plane + (column_major_indices ? column_major(at, in_dims) : at);
                    });
                }
            });
        } else {
            fail("max pooling does not support ", dtype_name(x.dtype()));
        }
    });
}

namespace {

// The average of the taps of one window; Acc is the sum's type (double for
// ONNX, float for ncnn).
template <class Acc, class T>
Acc window_average(const T* plane, const Shape& in_dims, const Taps& taps, const int64_t* start,
                   const std::vector<Span>& counted)
{
    const size_t rank = counted.size();
    Acc sum = 0;
    int64_t area = 0;
    for (int64_t t = 0; t < taps.count; ++t) {
        bool counts = true;
        for (size_t a = 0; a < rank && counts; ++a) {
            const int64_t pos = start[a] + taps.offsets[static_cast<size_t>(t) * rank + a];
            counts = pos >= counted[a].begin && pos < counted[a].end;
        }
        area += counts ? 1 : 0;
    }
    taps.visit(start, in_dims, [&](int64_t, int64_t at) {
        if (at >= 0) sum += static_cast<Acc>(to_double(plane[at]));
    });
    return area > 0 ? sum / static_cast<Acc>(area) : Acc(0);
}

} // namespace

void average_pool(const Tensor& x, const std::vector<Axis>& axes, const std::vector<Span>& counted,
                  PoolConvention convention, Tensor& y, const ExecContext& ctx)
{
    const Shape in_dims = spatial_dims(x.shape()), out_dims = output_dims(axes);
    const Taps taps(axes);
    const int64_t in_plane = shape_numel(in_dims), out_plane = shape_numel(out_dims);
    visit_dtype(x.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (!std::is_integral_v<T>) {
            ctx.parallel_for(x.dim(0), [&](int64_t begin, int64_t end) {
                for (int64_t c = begin; c < end; ++c) {
                    const T* plane = x.data<T>() + c * in_plane;
                    T* o = y.data<T>() + c * out_plane;
                    for_each_window(out_dims, axes, [&](int64_t p, const int64_t* start) {
                        o[p] = convention == PoolConvention::Ncnn
                                   ? convert_value<T>(window_average<float>(plane, in_dims, taps, start, counted))
                                   : convert_value<T>(window_average<double>(plane, in_dims, taps, start, counted));
                    });
                }
            });
        } else {
            fail("average pooling needs a floating-point input, got ", dtype_name(x.dtype()));
        }
    });
}

} // namespace kestrel::window
