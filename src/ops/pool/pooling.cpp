// Pooling: max (0=pooling_type 0) or average (1) over windows, per channel.
// The windows come in two forms:
//   ncnn params   Pooling: input (c,h,w). 1/11=kernel_w/h, 2/12=stride_w/h,
//                 3/14/13/15=pad left/right/top/bottom, 5=pad_mode (0 Caffe's
//                 ceil tail, 1 explicit pads, 2 SAME_UPPER, 3 SAME_LOWER),
//                 6=avgpool_count_include_pad, 4=global (output (c,)),
//                 7=adaptive with 8/18=out_w/h (-233: the input's). Float32,
//                 or int8 for max pooling (ncnn has no int8 average).
//                 Pooling1D: input (c,w), the w params only. Pooling3D: input
//                 (c,d,h,w), also 21=kernel_d 22=stride_d 23/16=pad
//                 front/behind 28=out_d; float32. Each omitted size defaults
//                 to the w one (pad_right to pad_left, pad_bottom to pad_top).
//   ONNX's        20=1 (MaxPool/AveragePool): input (N, C, spatial...), any
//                 number of spatial axes. 21=kernel_shape, 22=strides, 23=pads
//                 (all begins, then all ends), 24=dilations, 25=ceil_mode,
//                 26=auto_pad (0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID),
//                 6=count_include_pad, 27=storage_order. Max takes any
//                 real-number dtype except float16/bfloat16 and may have a
//                 second output, Indices (int64): the flat position of each
//                 maximum in the input, batch and channel included (27=1:
//                 the spatial axes counted column-major). Average takes float
//                 types; its divisor counts the window's taps inside the
//                 input, or with count_include_pad those inside the padded
//                 input (not ceil_mode's extra end).
// ncnn's details (src/layer/pooling.cpp), kept:
//  * pad_mode 0 adds Caffe's ceil-mode tail `stride - (w+pl+pr-k) % stride`
//    on the right/bottom.
//  * Max takes the max over the whole window, pads included (-FLT_MAX / -128).
//  * Average with count_include_pad=1 divides by kernel_h*kernel_w, tail included.
//  * Average with count_include_pad=0 counts the window positions inside
//    [pad_top, padded_h - pad_bottom - tail) of the padded input, where pad_top
//    and pad_bottom are the *param* pads: in modes 0/1 exactly the real input;
//    in the SAME modes (2/3) the computed SAME padding is counted (its zeros
//    enter the divisor). A window with no counted position gives 0.
//  * Sums and divisions in float.
// Every form is a list of window axes (common/sliding_window.h) with the
// positions an average counts, on the N-d reference kernels; ncnn's 2-D
// windows run on the 2-D kernel (kernels/pool2d.h), global pooling as one
// window over the plane; adaptive windows (sizes that vary per output) have a
// loop of their own.
#include <algorithm>
#include <array>
#include <cfloat>

#include "kernels/pool2d.h"
#include "ops/common/op_util.h"
#include "ops/pool/onnx_window.h"
#include "ops/pool/pool_plan.h"
#include "ops/quant/int8.h"

namespace kestrel {

namespace {

enum NcnnPadMode { kFull = 0, kExplicit = 1, kNcnnSameUpper = 2, kNcnnSameLower = 3 };
enum AutoPad { kNotSet = 0, kSameUpper = 1, kSameLower = 2, kValid = 3 };

// The windows of one input shape: per spatial axis, and the positions an
// average counts.
struct PoolWindows {
    std::vector<Axis> axes;
    std::vector<Span> counted;
};

// ncnn's params of one spatial axis.
struct NcnnAxisParams {
    int kernel = 0, stride = 1, pad_begin = 0, pad_end = 0, out = 0;
};

// ncnn's param ids per spatial axis d, h, w (kernel, stride, pad before, pad after, adaptive out).
constexpr int kAxisIds[3][5] = {{21, 22, 23, 16, 28}, {11, 12, 13, 15, 18}, {1, 2, 3, 14, 8}};
constexpr const char* kAxisNames[3][3] = {{"kernel_d", "stride_d", "out_d"}, {"kernel_h", "stride_h", "out_h"},
                                          {"kernel_w", "stride_w", "out_w"}};

class Pooling : public Op {
public:
    explicit Pooling(int spatial) : spatial_(spatial) {}

    void load_param(const ParamDict& pd) override
    {
        type_ = pd.get_int(0, 0);
        check(type_ == 0 || type_ == 1, "pooling_type (param 0) must be 0 (max) or 1 (avg), got ", type_);
        count_include_pad_ = pd.get_int(6, 0) != 0;
        onnx_ = spatial_ == 2 && onnx_form(pd, "MaxPool/AveragePool");
        if (onnx_) {
            window_.load(pd, 21, true);
            ceil_mode_ = pd.get_int(25, 0) != 0;
            auto_pad_ = pd.get_int(26, kNotSet);
            check(auto_pad_ >= kNotSet && auto_pad_ <= kValid, "auto_pad (param 26) must be 0..3, got ", auto_pad_);
            column_major_ = pd.get_int(27, 0) != 0;
            return;
        }
        global_ = pd.get_int(4, 0) != 0;
        adaptive_ = pd.get_int(7, 0) != 0;
        pad_mode_ = pd.get_int(5, 0);
        check(pad_mode_ >= 0 && pad_mode_ <= 3, "pad_mode (param 5) must be 0..3, got ", pad_mode_);
        if (global_) return;
        // w first: the others default to it.
        axes_.assign(static_cast<size_t>(spatial_), NcnnAxisParams{});
        NcnnAxisParams& w = axes_.back();
        for (int k = 2; k >= 3 - spatial_; --k) {
            NcnnAxisParams& a = axes_[static_cast<size_t>(k - (3 - spatial_))];
            const int* id = kAxisIds[k];
            const char* const* name = kAxisNames[k];
            const bool is_w = k == 2;
            if (adaptive_) {
                a.out = pd.get_int(id[4], is_w ? 0 : w.out);
                check(a.out > 0 || a.out == -233, "adaptive ", name[2], " (param ", id[4], ") must be > 0 or -233, got ", a.out);
                continue;
            }
            a.kernel = positive_param(pd, id[0], is_w ? 0 : w.kernel, name[0]);
            a.stride = positive_param(pd, id[1], is_w ? 1 : w.stride, name[1]);
            // pad_top defaults to pad_left, pad_bottom to pad_top (front/behind alike).
            a.pad_begin = pd.get_int(id[2], is_w ? 0 : w.pad_begin);
            a.pad_end = pd.get_int(id[3], a.pad_begin);
            check(a.pad_begin >= 0 && a.pad_end >= 0, "pads (params ", id[2], "/", id[3], ") must be >= 0");
        }
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        if (onnx_) {
            infer_onnx(in[0], out);
            return;
        }
        expect_output_count(out, 1);
        const DType dt = in[0].dtype;
        check(dt == DType::F32 || dt == DType::I8, "input must be float32 or int8, got ", dtype_name(dt));
        check(dt == DType::F32 || type_ == 0, "int8 input is only supported by max pooling (ncnn has no int8 average pooling)");
        check(dt == DType::F32 || spatial_ == 2, "Pooling1D and Pooling3D take float32");
        const Shape& s = in[0].shape;
        check(s.size() == static_cast<size_t>(spatial_) + 1, "expects a ",
              spatial_ == 1 ? "(c,w)" : spatial_ == 2 ? "(c,h,w)" : "(c,d,h,w)", " input, got ", shape_str(s));
        for (size_t k = 1; k < s.size(); ++k) check(s[k] > 0, "expects a non-empty spatial size, got ", shape_str(s));
        Shape o = {s[0]};
        if (!global_)
            for (size_t k = 0; k < axes_.size(); ++k) {
                const int64_t size = adaptive_ ? (axes_[k].out == -233 ? s[k + 1] : axes_[k].out)
                                               : ncnn_window(s[k + 1], axes_[k]).axis.out;
                check(size > 0, "kernel ", axes_[k].kernel, " does not fit the input ", shape_str(s), " with its padding");
                o.push_back(size);
            }
        out[0] = make_desc(o, dt);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        if (global_ || adaptive_) return shape_numel(in[0].shape);
        if (onnx_) {
            int64_t taps = 1;
            for (int64_t k : window_.kernel) taps *= k;
            return shape_numel(out[0].shape) * taps;
        }
        int64_t taps = 1;
        for (const NcnnAxisParams& a : axes_) taps *= a.kernel;
        return shape_numel(out[0].shape) * taps;
    }

    // 2-D float pooling of ncnn's form reads its input in channel blocks:
    // global pooling (the last layers of a blocked chain then write blocks;
    // its output stays plain), and max pooling, which writes blocks too.
    // Max pooling of quantized values is the quantized max pooling (rounding
    // x * scale, scale >= 0, keeps the order of the values), where every
    // window holds an input value (a window wholly in the padding gives the
    // int8 padding, -128, where the floats' would quantize to -127).
    bool int8_passthrough(const std::vector<TensorDesc>& in) const override
    {
        if (type_ != 0 || onnx_ || spatial_ != 2 || in.size() != 1 || in[0].shape.size() != 3) return false;
        if (global_ || adaptive_) return true;
        const Pool2dGeometry g = ncnn_geometry(in[0].shape[1], in[0].shape[2]);
        return g.pad_top < g.kernel_h && g.pad_left < g.kernel_w && (g.out_h - 1) * g.stride_h - g.pad_top < g.in_h &&
               (g.out_w - 1) * g.stride_w - g.pad_left < g.in_w;
    }

    BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&, bool) const override
    {
        if (onnx_ || spatial_ != 2 || adaptive_ || in[0].dtype != DType::F32 || in[0].shape.size() != 3) return {};
        if (global_) return BlockedLayouts{{0}, {-1}};
        if (type_ != 0 || !max_pool2d_blocks_supported(ncnn_geometry(in[0].shape[1], in[0].shape[2]))) return {};
        return BlockedLayouts{{0}, {1}};
    }

    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                                     PrepareContext&) const override
    {
        auto st = std::make_unique<PoolState>();
        st->x_blocked = in[0].layout == Layout::ChannelBlocks;
        st->y_blocked = out[0].layout == Layout::ChannelBlocks;
        if (!global_ && (st->x_blocked || st->y_blocked)) {
            st->g = ncnn_geometry(in[0].shape[1], in[0].shape[2]);
            st->channels = in[0].shape[0];
        }
        return st;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Tensor& x = in[0];
        const PoolState* st = ctx.state() ? &ctx.state_as<PoolState>() : nullptr;
        if (st && global_ && st->x_blocked) {
            const int64_t channels = out[0].numel(), pixels = x.numel() / x.dim(0) / x.dim(-1);
            global_pool_blocked(x.data<float>(), channels, pixels, type_ != 0, out[0].data<float>(), ctx);
            return;
        }
        if (st && (st->x_blocked || st->y_blocked)) {
            max_pool2d_blocks(x.data<float>(), st->x_blocked, st->channels, st->g, out[0].data<float>(),
                              st->y_blocked, ctx);
            return;
        }
        if (onnx_) {
            forward_onnx(x, out, ctx);
            return;
        }
        if (spatial_ != 2) {
            forward_ncnn_nd(x, out[0], ctx);
            return;
        }
        const int64_t c = x.dim(0), h = x.dim(1), w = x.dim(2);
        if (adaptive_) {
            adaptive_pool(x, out[0], ctx);
            return;
        }
        Pool2dGeometry g;
        Tensor y = out[0];
        if (global_) {
            // One window over the whole plane.
            g.in_h = g.kernel_h = h, g.in_w = g.kernel_w = w;
            g.out_h = g.out_w = 1;
            g.count_y1 = h, g.count_x1 = w;
            y = out[0].reshaped({c, 1, 1});
        } else {
            g = ncnn_geometry(h, w);
        }
        if (type_ == 0)
            max_pool2d(x, g, y, ctx);
        else
            average_pool2d(x, g, y, ctx);
    }

    // pooling_plan_2d (pool_plan.h).
    bool plan_2d(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, PoolPlan& plan) const
    {
        if (spatial_ != 2 || in.size() != 1 || out.size() != 1 || in[0].dtype != DType::F32) return false;
        const Shape& s = in[0].shape;
        if (s.size() != (onnx_ ? 4u : 3u)) return false;
        if (adaptive_ && !global_) return !onnx_ && adaptive_as_windows(s, out[0].shape, plan);
        plan.max = type_ == 0;
        if (onnx_) {
            const PoolWindows pw = onnx_windows(s);
            plan.axes = pw.axes, plan.counted = pw.counted;
            return true;
        }
        plan.axes.clear(), plan.counted.clear();
        for (size_t k = 1; k < 3; ++k) {
            NcnnWindow win;
            if (global_) win.axis.kernel = s[k], win.axis.out = 1, win.counted = Span{0, s[k]};
            else win = ncnn_window(s[k], axes_[k - 1]);
            plan.axes.push_back(win.axis);
            plan.counted.push_back(win.counted);
        }
        return true;
    }

private:
    // Adaptive windows that tile the plane evenly (each input size a multiple
    // of its output size: the ONNX global pools, most adaptive heads) as
    // plain windows of that many positions, every position counted.
    bool adaptive_as_windows(const Shape& s, const Shape& o, PoolPlan& plan) const
    {
        plan.max = type_ == 0;
        plan.axes.clear(), plan.counted.clear();
        for (size_t k = 1; k < 3; ++k) {
            if (o[k] <= 0 || s[k] % o[k] != 0) return false;
            window::Axis a;
            a.kernel = a.stride = s[k] / o[k];
            a.out = o[k];
            plan.axes.push_back(a);
            plan.counted.push_back(Span{0, s[k]});
        }
        return true;
    }

    // Blobs in channel blocks: global pooling's input, max pooling's either
    // side (then its windows, and the channel count the blocks hold).
    struct PoolState : OpState {
        bool x_blocked = false, y_blocked = false;
        Pool2dGeometry g;
        int64_t channels = 0;
    };

    // One axis of ncnn's windows: its pads (the ceil tail or SAME padding
    // included), output size, and the input range an average counts.
    struct NcnnWindow {
        Axis axis;
        Span counted;
    };
    NcnnWindow ncnn_window(int64_t n, const NcnnAxisParams& p) const
    {
        const int64_t k = p.kernel, s = p.stride;
        int64_t begin = p.pad_begin, end = p.pad_end;
        if (pad_mode_ == kFull) {
            // Caffe ceil mode: extra tail padding so the last window covers the end.
            const int64_t tail = (n + begin + end - k) % s;
            if (tail > 0) end += s - tail;
        } else if (pad_mode_ == kNcnnSameUpper || pad_mode_ == kNcnnSameLower) {
            const int64_t pad = std::max<int64_t>(0, k + (n - 1) / s * s - n);
            begin = pad_mode_ == kNcnnSameUpper ? pad / 2 : pad - pad / 2;
            end = pad - begin;
        }
        NcnnWindow win;
        win.axis.kernel = k, win.axis.stride = s, win.axis.pad_begin = begin;
        const int64_t padded = n + begin + end;
        win.axis.out = padded >= k ? (padded - k) / s + 1 : 0;
        if (count_include_pad_)
            win.counted = Span{-begin, n + end};
        else if (pad_mode_ == kNcnnSameUpper || pad_mode_ == kNcnnSameLower)
            win.counted = Span{p.pad_begin - begin, n + end - p.pad_end}; // ncnn excludes only the param pads
        else
            win.counted = Span{0, n};
        return win;
    }

    // ncnn's 2-D windows for the plane kernels.
    Pool2dGeometry ncnn_geometry(int64_t h, int64_t w) const
    {
        const NcnnWindow y = ncnn_window(h, axes_[0]), x = ncnn_window(w, axes_[1]);
        Pool2dGeometry g;
        g.in_h = h, g.in_w = w;
        g.kernel_h = y.axis.kernel, g.kernel_w = x.axis.kernel, g.stride_h = y.axis.stride, g.stride_w = x.axis.stride;
        g.count_include_pad = count_include_pad_;
        g.pad_left = x.axis.pad_begin, g.pad_top = y.axis.pad_begin;
        g.out_w = x.axis.out, g.out_h = y.axis.out;
        if (count_include_pad_) {
            g.count_y0 = 0, g.count_y1 = h, g.count_x0 = 0, g.count_x1 = w;
        } else {
            g.count_y0 = y.counted.begin, g.count_y1 = y.counted.end;
            g.count_x0 = x.counted.begin, g.count_x1 = x.counted.end;
        }
        return g;
    }

    // Pooling1D / Pooling3D: the channels as planes of the N-d window kernels
    // (global: one window over all; adaptive: ncnn's windows per output).
    void forward_ncnn_nd(const Tensor& x, Tensor& y, const ExecContext& ctx) const
    {
        const Shape& s = x.shape();
        if (adaptive_) {
            adaptive_nd(x, y, ctx);
            return;
        }
        std::vector<Axis> axes;
        std::vector<Span> counted;
        for (size_t k = 1; k < s.size(); ++k) {
            NcnnWindow win;
            if (global_) {
                win.axis.kernel = s[k], win.axis.out = 1, win.counted = Span{0, s[k]};
            } else {
                win = ncnn_window(s[k], axes_[k - 1]);
            }
            axes.push_back(win.axis);
            counted.push_back(win.counted);
        }
        Shape out_planes = window::output_dims(axes);
        out_planes.insert(out_planes.begin(), s[0]);
        Tensor planes = y.reshaped(out_planes);
        if (type_ == 0)
            window::max_pool(x, axes, window::PoolConvention::Ncnn, planes, nullptr, 0, false, ctx);
        else
            window::average_pool(x, axes, counted, window::PoolConvention::Ncnn, planes, ctx);
    }

    // ncnn's adaptive windows along every spatial axis: output i of n covers
    // [floor(i*n/o), ceil((i+1)*n/o)).
    void adaptive_nd(const Tensor& x, Tensor& y, const ExecContext& ctx) const
    {
        const Shape& s = x.shape();
        const Shape& o = y.shape();
        const int64_t plane = shape_numel(s) / s[0], out_plane = shape_numel(o) / o[0];
        const size_t r = s.size() - 1;
        ctx.parallel_for(s[0] * out_plane, [&](int64_t begin, int64_t end) {
            for (int64_t job = begin; job < end; ++job) {
                int64_t rest = job % out_plane;
                std::array<int64_t, 3> lo{}, hi{}; // r <= 3 spatial axes; no allocation per output
                for (size_t k = r; k-- > 0;) {
                    const int64_t i = rest % o[k + 1], n = s[k + 1], on = o[k + 1];
                    rest /= on;
                    lo[k] = n * i / on, hi[k] = (n * (i + 1) + on - 1) / on;
                }
                const float* p = x.data<float>() + job / out_plane * plane;
                float best = -FLT_MAX, sum = 0.f;
                int64_t count = 0;
                std::array<int64_t, 3> at = lo;
                for (bool more = true; more;) {
                    int64_t flat = 0;
                    for (size_t k = 0; k < r; ++k) flat = flat * s[k + 1] + at[k];
                    best = std::max(best, p[flat]);
                    sum += p[flat];
                    ++count;
                    more = false;
                    for (size_t k = r; k-- > 0;) {
                        if (++at[k] < hi[k]) {
                            more = true;
                            break;
                        }
                        at[k] = lo[k];
                    }
                }
                y.data<float>()[job] = type_ == 0 ? best : sum / static_cast<float>(count);
            }
        });
    }

    // ncnn's adaptive windows: output i covers [floor(i*h/oh), ceil((i+1)*h/oh)).
    template <class T> void adaptive_plane(const T* p, int64_t h, int64_t w, T* o, int64_t oh, int64_t ow) const
    {
        for (int64_t i = 0; i < oh; ++i) {
            const int64_t y0 = h * i / oh, y1 = (h * (i + 1) + oh - 1) / oh;
            for (int64_t j = 0; j < ow; ++j) {
                const int64_t x0 = w * j / ow, x1 = (w * (j + 1) + ow - 1) / ow;
                if (type_ == 0) {
                    T m = p[y0 * w + x0];
                    for (int64_t y = y0; y < y1; ++y)
                        for (int64_t x = x0; x < x1; ++x) m = std::max(m, p[y * w + x]);
                    o[i * ow + j] = m;
                } else {
                    float sum = 0.f;
                    for (int64_t y = y0; y < y1; ++y)
                        for (int64_t x = x0; x < x1; ++x) sum += static_cast<float>(p[y * w + x]);
                    o[i * ow + j] = static_cast<T>(sum / static_cast<float>(y1 - y0) / static_cast<float>(x1 - x0));
                }
            }
        }
    }

    void adaptive_pool(const Tensor& x, Tensor& y, const ExecContext& ctx) const
    {
        const int64_t h = x.dim(1), w = x.dim(2), oh = y.dim(1), ow = y.dim(2);
        ctx.parallel_for(x.dim(0), [&](int64_t begin, int64_t end) {
            for (int64_t ch = begin; ch < end; ++ch) {
                if (x.dtype() == DType::I8)
                    adaptive_plane(x.data<int8_t>() + ch * h * w, h, w, y.data<int8_t>() + ch * oh * ow, oh, ow);
                else
                    adaptive_plane(x.data<float>() + ch * h * w, h, w, y.data<float>() + ch * oh * ow, oh, ow);
            }
        });
    }

    void infer_onnx(const TensorDesc& x, std::vector<TensorDesc>& out) const
    {
        const bool max = type_ == 0;
        check(out.size() == 1 || (max && out.size() == 2), "expects ", max ? "1 or 2 outputs" : "1 output", ", got ",
              out.size());
        const DType dt = x.dtype;
        if (max)
            check(dt == DType::F32 || dt == DType::F64 || dt == DType::I8 || dt == DType::U8 || dt == DType::I16 ||
                      dt == DType::U16 || dt == DType::I32 || dt == DType::U32 || dt == DType::I64 || dt == DType::U64,
                  "input must be a real-number type other than float16, got ", dtype_name(dt));
        else
            check(dtype_is_float(dt), "input must be a float type, got ", dtype_name(dt));
        window_.expect_input(x.shape);
        Shape o = {x.shape[0], x.shape[1]};
        for (const Axis& a : onnx_windows(x.shape).axes) o.push_back(a.out);
        out[0] = TensorDesc(o, dt);
        if (out.size() == 2) out[1] = TensorDesc(o, DType::I64);
    }

    void forward_onnx(const Tensor& in, std::vector<Tensor>& out, const ExecContext& ctx) const
    {
        const Shape& s = in.shape();
        const PoolWindows pw = onnx_windows(s);
        // Every (sample, channel) is one plane of the kernels.
        Shape planes = window::spatial_dims(s);
        planes[0] = s[0] * s[1];
        const Tensor x = in.reshaped(planes);
        Shape out_planes = window::output_dims(pw.axes);
        out_planes.insert(out_planes.begin(), planes[0]);
        Tensor y = out[0].reshaped(out_planes);
        if (type_ == 0) {
            Tensor indices = out.size() == 2 ? out[1].reshaped(out_planes) : Tensor();
            window::max_pool(x, pw.axes, window::PoolConvention::Onnx, y, out.size() == 2 ? &indices : nullptr, 0,
                             column_major_, ctx);
            return;
        }
        window::average_pool(x, pw.axes, pw.counted, window::PoolConvention::Onnx, y, ctx);
    }

    PoolWindows onnx_windows(const Shape& s) const
    {
        PoolWindows pw;
        pw.axes.resize(window_.kernel.size());
        for (size_t i = 0; i < pw.axes.size(); ++i) {
            Axis& a = pw.axes[i];
            const int64_t in = s[i + 2];
            a.kernel = window_.kernel[i], a.stride = window_.stride[i], a.dilation = window_.dilation[i];
            const Span p = auto_pad_ == kSameUpper || auto_pad_ == kSameLower
                               ? window::same_pads(in, a.stride, a.extent(), auto_pad_ == kSameUpper)
                               : auto_pad_ == kValid ? Span{} : window_.pads[i];
            a.pad_begin = p.begin;
            const int64_t span = in + p.begin + p.end - a.extent();
            check(span >= 0, "kernel extent ", a.extent(), " does not fit the padded input size ", in + p.begin + p.end);
            if (ceil_mode_ && auto_pad_ == kNotSet) {
                a.out = (span + a.stride - 1) / a.stride + 1;
                // The last window must start inside the input or its leading padding.
                if ((a.out - 1) * a.stride >= in + p.begin) --a.out;
            } else {
                a.out = span / a.stride + 1;
            }
            pw.counted.push_back(count_include_pad_ ? Span{-p.begin, in + p.end} : Span{0, in});
        }
        return pw;
    }

    int spatial_; // ncnn's spatial axes: 1 (Pooling1D), 2 (Pooling), 3 (Pooling3D)
    int type_ = 0;
    bool count_include_pad_ = false;
    bool onnx_ = false;
    // ncnn's form
    int pad_mode_ = 0;
    bool global_ = false, adaptive_ = false;
    std::vector<NcnnAxisParams> axes_; // per spatial axis, outermost first
    // ONNX's form
    OnnxWindow window_;
    bool ceil_mode_ = false, column_major_ = false;
    int auto_pad_ = kNotSet;
};

} // namespace

bool pooling_plan_2d(const Op& op, const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, PoolPlan& plan)
{
    const auto* pooling = dynamic_cast<const Pooling*>(&op);
    return pooling != nullptr && pooling->plan_2d(in, out, plan);
}

std::unique_ptr<Op> make_pooling() { return std::make_unique<Pooling>(2); }
std::unique_ptr<Op> make_pooling1d() { return std::make_unique<Pooling>(1); }
std::unique_ptr<Op> make_pooling3d() { return std::make_unique<Pooling>(3); }

} // namespace kestrel
