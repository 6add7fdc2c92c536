// Pooling: max (0=pooling_type 0) or average (1) over windows, per channel.
// The windows come in two forms:
//   ncnn params   input (c,h,w). 1/11=kernel_w/h, 2/12=stride_w/h,
//                 3/14/13/15=pad left/right/top/bottom, 5=pad_mode (0 Caffe's
//                 ceil tail, 1 explicit pads, 2 SAME_UPPER, 3 SAME_LOWER),
//                 6=avgpool_count_include_pad, 4=global (output (c,)),
//                 7=adaptive with 8/18=out_w/h (-233: the input's). Float32,
//                 or int8 for max pooling (ncnn has no int8 average).
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

#include "kernels/pool2d.h"
#include "ops/common/op_util.h"
#include "ops/pool/onnx_window.h"
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

class Pooling : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        type_ = pd.get_int(0, 0);
        check(type_ == 0 || type_ == 1, "pooling_type (param 0) must be 0 (max) or 1 (avg), got ", type_);
        count_include_pad_ = pd.get_int(6, 0) != 0;
        onnx_ = onnx_form(pd, "MaxPool/AveragePool");
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
        if (adaptive_) {
            out_w_ = pd.get_int(8, 0);
            out_h_ = pd.get_int(18, out_w_);
            check(out_w_ > 0 || out_w_ == -233, "adaptive out_w (param 8) must be > 0 or -233, got ", out_w_);
            check(out_h_ > 0 || out_h_ == -233, "adaptive out_h (param 18) must be > 0 or -233, got ", out_h_);
            return;
        }
        kernel_w_ = positive_param(pd, 1, 0, "kernel_w");
        kernel_h_ = positive_param(pd, 11, kernel_w_, "kernel_h");
        stride_w_ = positive_param(pd, 2, 1, "stride_w");
        stride_h_ = positive_param(pd, 12, stride_w_, "stride_h");
        pad_left_ = pd.get_int(3, 0);
        pad_right_ = pd.get_int(14, pad_left_);
        pad_top_ = pd.get_int(13, pad_left_);
        pad_bottom_ = pd.get_int(15, pad_top_);
        for (int p : {pad_left_, pad_right_, pad_top_, pad_bottom_})
            check(p >= 0, "pads (params 3/14/13/15) must be >= 0, got ", p);
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
        const Shape& s = in[0].shape;
        check(s.size() == 3, "expects a (c,h,w) input, got ", shape_str(s));
        check(s[1] > 0 && s[2] > 0, "expects a non-empty spatial size, got ", shape_str(s));
        if (global_) {
            out[0] = make_desc({s[0]}, dt);
            return;
        }
        if (adaptive_) {
            out[0] = make_desc({s[0], out_h_ == -233 ? s[1] : out_h_, out_w_ == -233 ? s[2] : out_w_}, dt);
            return;
        }
        const Pool2dGeometry g = ncnn_geometry(s[1], s[2]);
        check(g.out_h > 0 && g.out_w > 0, "kernel ", kernel_h_, "x", kernel_w_, " does not fit the input ", s[1], "x",
              s[2], " with its padding");
        out[0] = make_desc({s[0], g.out_h, g.out_w}, dt);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        if (global_ || adaptive_) return shape_numel(in[0].shape);
        if (onnx_) {
            int64_t taps = 1;
            for (int64_t k : window_.kernel) taps *= k;
            return shape_numel(out[0].shape) * taps;
        }
        return shape_numel(out[0].shape) * kernel_h_ * kernel_w_;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Tensor& x = in[0];
        if (onnx_) {
            forward_onnx(x, out, ctx);
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

private:
    // ncnn's 2-D windows: pads (the ceil tail or SAME padding included), output
    // size and the range an average counts.
    Pool2dGeometry ncnn_geometry(int64_t h, int64_t w) const
    {
        Pool2dGeometry g;
        g.in_h = h, g.in_w = w;
        g.kernel_h = kernel_h_, g.kernel_w = kernel_w_, g.stride_h = stride_h_, g.stride_w = stride_w_;
        g.count_include_pad = count_include_pad_;
        int64_t pad_left = pad_left_, pad_right = pad_right_, pad_top = pad_top_, pad_bottom = pad_bottom_;
        if (pad_mode_ == kFull) {
            // Caffe ceil mode: extra tail padding so the last window covers the end.
            const int64_t wtail = (w + pad_left + pad_right - kernel_w_) % stride_w_;
            const int64_t htail = (h + pad_top + pad_bottom - kernel_h_) % stride_h_;
            if (wtail > 0) pad_right += stride_w_ - wtail;
            if (htail > 0) pad_bottom += stride_h_ - htail;
        } else if (pad_mode_ == kNcnnSameUpper || pad_mode_ == kNcnnSameLower) {
            const int64_t wpad = std::max<int64_t>(0, kernel_w_ + (w - 1) / stride_w_ * stride_w_ - w);
            const int64_t hpad = std::max<int64_t>(0, kernel_h_ + (h - 1) / stride_h_ * stride_h_ - h);
            const bool upper = pad_mode_ == kNcnnSameUpper;
            pad_left = upper ? wpad / 2 : wpad - wpad / 2;
            pad_right = wpad - pad_left;
            pad_top = upper ? hpad / 2 : hpad - hpad / 2;
            pad_bottom = hpad - pad_top;
        }
        g.pad_left = pad_left, g.pad_top = pad_top;
        const int64_t pw = w + pad_left + pad_right, ph = h + pad_top + pad_bottom;
        g.out_w = pw >= kernel_w_ ? (pw - kernel_w_) / stride_w_ + 1 : 0;
        g.out_h = ph >= kernel_h_ ? (ph - kernel_h_) / stride_h_ + 1 : 0;
        if (pad_mode_ == kNcnnSameUpper || pad_mode_ == kNcnnSameLower) {
            // ncnn excludes only the param pads here, so SAME padding is counted.
            g.count_y0 = pad_top_ - pad_top, g.count_y1 = h + pad_bottom - pad_bottom_;
            g.count_x0 = pad_left_ - pad_left, g.count_x1 = w + pad_right - pad_right_;
        } else {
            g.count_y0 = 0, g.count_y1 = h, g.count_x0 = 0, g.count_x1 = w;
        }
        return g;
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

    int type_ = 0;
    bool count_include_pad_ = false;
    bool onnx_ = false;
    // ncnn's form
    int pad_mode_ = 0;
    bool global_ = false, adaptive_ = false;
    int kernel_w_ = 0, kernel_h_ = 0, stride_w_ = 1, stride_h_ = 1;
    int pad_left_ = 0, pad_right_ = 0, pad_top_ = 0, pad_bottom_ = 0;
    int out_w_ = 0, out_h_ = 0;
    // ONNX's form
    OnnxWindow window_;
    bool ceil_mode_ = false, column_major_ = false;
    int auto_pad_ = kNotSet;
};

} // namespace

std::unique_ptr<Op> make_pooling() { return std::make_unique<Pooling>(); }

} // namespace kestrel
