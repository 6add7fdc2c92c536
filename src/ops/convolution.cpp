// Convolution and ConvolutionDepthWise (ncnn params; one class, the depthwise
// type adds param 7 = group). Input (c,h,w) -> output (num_output,outh,outw).
//
// Paths:
//  * fp32: pad with pad_value (18), accumulate per output channel.
//  * int8 (8 = int8_scale_term != 0): the input is quantized with the bottom
//    scale (unless it already is I8), padded with (int8)pad_value, accumulated
//    in int32, dequantized per output channel, bias, activation, and with
//    int8_scale_term > 100 requantized to an I8 output with the top scale.
//  * dynamic weight (19 = 1): inputs [x, W, (bias)], W our shape
//    (outch, inch/group, kh, kw) = ncnn [w=kw, h=kh, d=inch/group, c=outch].
//  * Convolution with a 1-D input and a 1x1 kernel: ncnn's deprecated path,
//    computed as InnerProduct (output (num_output,)).
// The kernels here are the plain reference: pad, then accumulate per output channel.
#include <algorithm>
#include <cstring>
#include <vector>

#include "ops/activation.h"
#include "ops/builtin_ops.h"
#include "ops/int8.h"
#include "ops/op_util.h"

namespace kestrel {

namespace {

constexpr int kSameUpper = -233;
constexpr int kSameLower = -234;

struct ConvGeometry {
    int64_t pad_left, pad_right, pad_top, pad_bottom;
    int64_t out_h, out_w;
};

// The kernel actually used: from params and weights, or from the dynamic weight input.
struct KernelDims {
    int64_t kw = 0, kh = 0;
    int64_t outch = 0;  // output channels
    int64_t inch_g = 0; // input channels per group
};

class Convolution : public Op {
public:
    explicit Convolution(bool depthwise) : depthwise_(depthwise) {}

    void load_param(const ParamDict& pd) override
    {
        const int dyn = pd.get_int(19, 0);
        check(dyn == 0 || dyn == 1, "dynamic_weight (param 19) must be 0 or 1, got ", dyn);
        dynamic_ = dyn == 1;
        num_output_ = pd.get_int(0, 0);
        kernel_w_ = pd.get_int(1, 0);
        kernel_h_ = pd.get_int(11, kernel_w_);
        if (!dynamic_) {
            check(num_output_ > 0, "num_output (param 0) must be > 0, got ", num_output_);
            check(kernel_w_ > 0, "kernel_w (param 1) must be > 0, got ", kernel_w_);
            check(kernel_h_ > 0, "kernel_h (param 11) must be > 0, got ", kernel_h_);
        } else {
            check(num_output_ >= 0, "num_output (param 0) must be >= 0, got ", num_output_);
        }
        dilation_w_ = positive_param(pd, 2, 1, "dilation_w");
        dilation_h_ = positive_param(pd, 12, dilation_w_, "dilation_h");
        stride_w_ = positive_param(pd, 3, 1, "stride_w");
        stride_h_ = positive_param(pd, 13, stride_w_, "stride_h");
        pad_left_ = pd.get_int(4, 0);
        pad_right_ = pd.get_int(15, pad_left_);
        pad_top_ = pd.get_int(14, pad_left_);
        pad_bottom_ = pd.get_int(16, pad_top_);
        const bool all_upper = pad_left_ == kSameUpper && pad_right_ == kSameUpper && pad_top_ == kSameUpper &&
                               pad_bottom_ == kSameUpper;
        const bool all_lower = pad_left_ == kSameLower && pad_right_ == kSameLower && pad_top_ == kSameLower &&
                               pad_bottom_ == kSameLower;
        const bool explicit_pads = pad_left_ >= 0 && pad_right_ >= 0 && pad_top_ >= 0 && pad_bottom_ >= 0;
        check(all_upper || all_lower || explicit_pads,
              "pads (params 4/15/14/16) must all be >= 0, or all -233 (SAME_UPPER), or all -234 (SAME_LOWER); got ",
              pad_left_, "/", pad_right_, "/", pad_top_, "/", pad_bottom_);
        same_ = all_upper ? kSameUpper : all_lower ? kSameLower : 0;
        pad_value_ = pd.get_float(18, 0.f);
        bias_term_ = pd.get_int(5, 0) != 0;
        weight_data_size_ = pd.get_int(6, 0);
        group_ = depthwise_ ? positive_param(pd, 7, 1, "group") : 1;
        int8_scale_term_ = pd.get_int(8, 0);
        check(int8_scale_term_ >= 0, "int8_scale_term (param 8) must be >= 0, got ", int8_scale_term_);
        if (depthwise_)
            check(int8_scale_term_ == 0 || int8_scale_term_ == 1 || int8_scale_term_ == 2 || int8_scale_term_ == 101 ||
                      int8_scale_term_ == 102,
                  "int8_scale_term (param 8) must be 0, 1, 2, 101 or 102, got ", int8_scale_term_);
        check(!(dynamic_ && int8_scale_term_ != 0), "int8 (param 8) cannot be combined with dynamic weights (param 19)");
        activation_ = Activation::from_ncnn(pd.get_int(9, 0), pd.get_floats(10));
        check(num_output_ % group_ == 0, "num_output ", num_output_, " is not divisible by group ", group_);
        if (dynamic_) return;
        // Each factor is below 2^31, so kernel_area fits; compare by division so nothing overflows.
        const int64_t kernel_area = static_cast<int64_t>(kernel_w_) * kernel_h_;
        check(weight_data_size_ > 0 && kernel_area <= weight_data_size_ && num_output_ <= weight_data_size_ / kernel_area,
              "weight_data_size (param 6) ", weight_data_size_, " is smaller than num_output*kernel_h*kernel_w = ",
              num_output_, "*", kernel_h_, "*", kernel_w_);
        const int64_t per_input = static_cast<int64_t>(num_output_) * kernel_area;
        check(weight_data_size_ % per_input == 0, "weight_data_size (param 6) ",
              weight_data_size_, " is not a positive multiple of num_output*kernel_h*kernel_w = ", per_input);
        in_channels_ = weight_data_size_ / per_input * group_;
    }

    void load_model(WeightReader& wr) override
    {
        if (dynamic_) return;
        Tensor weight = wr.load(weight_data_size_, WeightEncoding::Tagged);
        Tensor bias = bias_term_ ? wr.load(num_output_, WeightEncoding::Raw) : Tensor();
        std::vector<float> wscales;
        float bottom_scale = 0.f, top_scale = 0.f;
        if (int8_scale_term_ != 0) {
            // ConvolutionDepthWise: 1/101 one weight scale per group, 2/102 a single one.
            const int64_t n = !depthwise_ ? num_output_ : (int8_scale_term_ % 100 == 1 ? group_ : 1);
            const Tensor ws = wr.load(n, WeightEncoding::Raw);
            wscales.assign(ws.data<float>(), ws.data<float>() + n);
            bottom_scale = wr.load(1, WeightEncoding::Raw).data<float>()[0];
            if (int8_scale_term_ > 100) top_scale = wr.load(1, WeightEncoding::Raw).data<float>()[0];
        }
        check(weight.dtype() == DType::F32 || weight.dtype() == DType::I8, "weights must be float32 or int8");
        if (weight.dtype() == DType::I8) {
            check(int8_scale_term_ != 0, "int8 weights need int8_scale_term (param 8)");
        } else if (int8_scale_term_ != 0) {
            // Quantize at load: chunk i of the weights (an output channel, a group,
            // or everything for the single-scale depthwise form) with scale i.
            Tensor q({weight_data_size_}, DType::I8);
            const int64_t chunk = weight_data_size_ / static_cast<int64_t>(wscales.size());
            for (size_t i = 0; i < wscales.size(); ++i)
                quantize_span(weight.data<float>() + i * chunk, q.data<int8_t>() + i * chunk, chunk, wscales[i]);
            weight = q;
        }
        weight_ = weight;
        bias_ = bias;
        // Per output channel weight scale.
        w_scale_.assign(int8_scale_term_ != 0 ? num_output_ : 0, 0.f);
        for (int64_t oc = 0; oc < static_cast<int64_t>(w_scale_.size()); ++oc)
            w_scale_[oc] = wscales.size() == 1 ? wscales[0]
                                               : wscales[depthwise_ ? oc / (num_output_ / group_) : oc];
        bottom_scale_ = bottom_scale;
        top_scale_ = top_scale;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const size_t n_in = dynamic_ ? (bias_term_ ? 3 : 2) : 1;
        expect_input_count(in, n_in, n_in);
        expect_output_count(out, 1);
        const TensorDesc& x = in[0];
        check(x.dtype == DType::F32 || x.dtype == DType::I8, "input must be float32 or int8, got ",
              dtype_name(x.dtype));
        check(x.dtype == DType::F32 || int8_scale_term_ != 0,
              "an int8 input needs an int8 layer (int8_scale_term, param 8)");
        if (is_flat_path(x.shape)) {
            check(x.shape[0] == num_flat_inputs(), "expects ", num_flat_inputs(),
                  " input values (from weight_data_size), got ", x.shape[0]);
            out[0] = make_desc({num_output_}, DType::F32);
            return;
        }
        const Shape& s = x.shape;
        check(s.size() == 3, "expects a (c,h,w) input, got ", shape_str(s));
        const KernelDims k = kernel_dims(in);
        check(s[0] == k.inch_g * group_, "expects ", k.inch_g * group_, " input channels (",
              dynamic_ ? "from the weight input" : "from weight_data_size", "), got ", s[0]);
        const ConvGeometry g = geometry(s[1], s[2], k);
        check(g.out_h > 0 && g.out_w > 0, "kernel ", k.kh, "x", k.kw, " (dilation ", dilation_h_, "x", dilation_w_,
              ") does not fit the padded input ", s[1] + g.pad_top + g.pad_bottom, "x",
              s[2] + g.pad_left + g.pad_right);
        out[0] = make_desc({k.outch, g.out_h, g.out_w}, int8_scale_term_ > 100 ? DType::I8 : DType::F32);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        if (is_flat_path(in[0].shape)) return static_cast<int64_t>(num_output_) * num_flat_inputs();
        const KernelDims k = kernel_dims(in);
        return shape_numel(out[0].shape) * k.inch_g * k.kh * k.kw;
    }

    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>((weight_.defined() ? weight_.nbytes() : 0) +
                                    (bias_.defined() ? bias_.nbytes() : 0) + w_scale_.size() * sizeof(float));
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Tensor& x = in[0];
        if (is_flat_path(x.shape())) {
            forward_flat(x, out[0], ctx);
            return;
        }
        std::vector<TensorDesc> descs;
        for (const Tensor& t : in) descs.push_back(make_desc(t.shape(), t.dtype()));
        const KernelDims k = kernel_dims(descs);
        const ConvGeometry g = geometry(x.dim(1), x.dim(2), k);
        const float* bias = nullptr;
        if (dynamic_) {
            check(in[1].dtype() == DType::F32, "the weight input must be float32");
            if (bias_term_) bias = in[2].data<float>();
        } else if (bias_.defined()) {
            bias = bias_.data<float>();
        }
        if (int8_scale_term_ != 0)
            forward_int8(x, g, k, bias, out[0], ctx);
        else
            forward_f32(x, g, k, dynamic_ ? in[1].data<float>() : weight_.data<float>(), bias, out[0], ctx);
    }

private:
    bool is_flat_path(const Shape& s) const
    {
        return !depthwise_ && !dynamic_ && s.size() == 1 && kernel_w_ == 1 && kernel_h_ == 1;
    }
    int64_t num_flat_inputs() const { return weight_data_size_ / num_output_; }

    KernelDims kernel_dims(const std::vector<TensorDesc>& in) const
    {
        KernelDims k;
        if (!dynamic_) {
            k.kw = kernel_w_, k.kh = kernel_h_, k.outch = num_output_, k.inch_g = in_channels_ / group_;
            return k;
        }
        const TensorDesc& w = in[1];
        check(w.dtype == DType::F32, "the weight input must be float32, got ", dtype_name(w.dtype));
        check(w.shape.size() == 3 || w.shape.size() == 4,
              "the weight input must be (outch, inch/group, kh, kw) or (outch, kh, kw), got ", shape_str(w.shape));
        const NcnnDims d = ncnn_dims(w.shape);
        k.kw = d.w, k.kh = d.h, k.inch_g = d.d, k.outch = d.c;
        check(k.kw > 0 && k.kh > 0 && k.inch_g > 0 && k.outch > 0, "the weight input ", shape_str(w.shape),
              " must not be empty");
        check(k.outch % group_ == 0, "the weight input's ", k.outch, " output channels are not divisible by group ",
              group_);
        if (bias_term_) {
            check(in[2].dtype == DType::F32, "the bias input must be float32, got ", dtype_name(in[2].dtype));
            check(shape_numel(in[2].shape) == k.outch, "the bias input has ", shape_numel(in[2].shape),
                  " values, expected ", k.outch, " (output channels)");
        }
        return k;
    }

    ConvGeometry geometry(int64_t h, int64_t w, const KernelDims& k) const
    {
        ConvGeometry g{pad_left_, pad_right_, pad_top_, pad_bottom_, 0, 0};
        const int64_t extent_w = static_cast<int64_t>(dilation_w_) * (k.kw - 1) + 1;
        const int64_t extent_h = static_cast<int64_t>(dilation_h_) * (k.kh - 1) + 1;
        if (same_ != 0) {
            // ONNX SAME: total pad so that out = ceil(in / stride); the odd pixel goes after (UPPER) or before.
            const int64_t pw = std::max<int64_t>(0, extent_w + (w - 1) / stride_w_ * stride_w_ - w);
            const int64_t ph = std::max<int64_t>(0, extent_h + (h - 1) / stride_h_ * stride_h_ - h);
            const bool upper = same_ == kSameUpper;
            g.pad_left = upper ? pw / 2 : pw - pw / 2;
            g.pad_right = pw - g.pad_left;
            g.pad_top = upper ? ph / 2 : ph - ph / 2;
            g.pad_bottom = ph - g.pad_top;
        }
        const int64_t pw = w + g.pad_left + g.pad_right, ph = h + g.pad_top + g.pad_bottom;
        g.out_w = pw >= extent_w ? (pw - extent_w) / stride_w_ + 1 : 0;
        g.out_h = ph >= extent_h ? (ph - extent_h) / stride_h_ + 1 : 0;
        return g;
    }

    // Copies x into a (c, ph, pw) buffer filled with `pad` (or returns x when there is no padding).
    template <class T>
    Tensor pad_input(const Tensor& x, const ConvGeometry& g, T pad, const ExecContext& ctx) const
    {
        if (g.pad_left == 0 && g.pad_right == 0 && g.pad_top == 0 && g.pad_bottom == 0) return x;
        const int64_t c = x.dim(0), h = x.dim(1), w = x.dim(2);
        const int64_t ph = h + g.pad_top + g.pad_bottom, pw = w + g.pad_left + g.pad_right;
        Tensor p({c, ph, pw}, x.dtype());
        const T* s = x.data<T>();
        T* d = p.data<T>();
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            for (int64_t ch = begin; ch < end; ++ch) {
                T* dp = d + ch * ph * pw;
                std::fill(dp, dp + ph * pw, pad);
                for (int64_t y = 0; y < h; ++y)
                    std::memcpy(dp + (y + g.pad_top) * pw + g.pad_left, s + (ch * h + y) * w, sizeof(T) * w);
            }
        });
        return p;
    }

    // o[y][x] += k * in[y*stride_h][x*stride_w] over the output plane.
    void accumulate_tap(float* o, const float* in, int64_t in_w, float k, const ConvGeometry& g) const
    {
        for (int64_t y = 0; y < g.out_h; ++y) {
            const float* row = in + y * stride_h_ * in_w;
            float* orow = o + y * g.out_w;
            if (stride_w_ == 1)
                for (int64_t x = 0; x < g.out_w; ++x) orow[x] += k * row[x];
            else
                for (int64_t x = 0; x < g.out_w; ++x) orow[x] += k * row[x * stride_w_];
        }
    }
    // Sum over one output channel's input channels and taps into `o` (already initialised).
    void accumulate_channel(float* o, const float* src, int64_t ph, int64_t pw, const float* wt, int64_t oc,
                            const KernelDims& k, const ConvGeometry& g) const
    {
        const int64_t out_per_group = k.outch / group_;
        const int64_t grp = oc / out_per_group;
        const int64_t ksize = k.kh * k.kw;
        for (int64_t ic = 0; ic < k.inch_g; ++ic) {
            const float* in_plane = src + (grp * k.inch_g + ic) * ph * pw;
            const float* kp = wt + (oc * k.inch_g + ic) * ksize;
            for (int64_t ky = 0; ky < k.kh; ++ky)
                for (int64_t kx = 0; kx < k.kw; ++kx)
                    accumulate_tap(o, in_plane + ky * dilation_h_ * pw + kx * dilation_w_, pw, kp[ky * k.kw + kx], g);
        }
    }

    void forward_f32(const Tensor& x, const ConvGeometry& g, const KernelDims& k, const float* wt, const float* bias,
                     Tensor& y, const ExecContext& ctx) const
    {
        const Tensor padded = pad_input<float>(x, g, pad_value_, ctx);
        const int64_t ph = padded.dim(1), pw = padded.dim(2);
        const float* src = padded.data<float>();
        float* dst = y.data<float>();
        const int64_t plane = g.out_h * g.out_w;
        ctx.parallel_for(k.outch, [&](int64_t begin, int64_t end) {
            for (int64_t oc = begin; oc < end; ++oc) {
                float* o = dst + oc * plane;
                std::fill(o, o + plane, bias ? bias[oc] : 0.f);
                accumulate_channel(o, src, ph, pw, wt, oc, k, g);
                activation_.apply(o, plane);
            }
        });
    }

    Tensor quantize_input(const Tensor& x, const ExecContext& ctx) const
    {
        if (x.dtype() == DType::I8) return x;
        Tensor q(x.shape(), DType::I8);
        const int64_t c = x.dim(0), plane = x.numel() / c;
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            quantize_span(x.data<float>() + begin * plane, q.data<int8_t>() + begin * plane, (end - begin) * plane,
                          bottom_scale_);
        });
        return q;
    }

    // Int8: the padded input is unrolled once into per-group columns
    // col[g][pixel][r], r = (ic_in_group*kh + ky)*kw + kx, so that every output
    // value is one contiguous int8 dot product with its weight row (same r order).
    void forward_int8(const Tensor& x, const ConvGeometry& g, const KernelDims& k, const float* bias, Tensor& y,
                      const ExecContext& ctx) const
    {
        const Tensor padded = pad_input<int8_t>(quantize_input(x, ctx), g, int8_pad_value(pad_value_), ctx);
        const int64_t ph = padded.dim(1), pw = padded.dim(2), channels = padded.dim(0);
        const int64_t plane = g.out_h * g.out_w, ksize = k.kh * k.kw, R = k.inch_g * ksize;
        const int8_t* src = padded.data<int8_t>();
        Tensor col({group_, plane, R}, DType::I8);
        int8_t* cp = col.data<int8_t>();
        ctx.parallel_for(channels, [&](int64_t begin, int64_t end) {
            for (int64_t ic = begin; ic < end; ++ic) {
                const int64_t grp = ic / k.inch_g, i = ic % k.inch_g;
                const int8_t* in_plane = src + ic * ph * pw;
                int8_t* gcol = cp + grp * plane * R;
                for (int64_t ky = 0; ky < k.kh; ++ky)
                    for (int64_t kx = 0; kx < k.kw; ++kx) {
                        const int64_t r = (i * k.kh + ky) * k.kw + kx;
                        for (int64_t oy = 0; oy < g.out_h; ++oy) {
                            const int8_t* row = in_plane + (oy * stride_h_ + ky * dilation_h_) * pw + kx * dilation_w_;
                            int8_t* dst = gcol + oy * g.out_w * R + r;
                            for (int64_t ox = 0; ox < g.out_w; ++ox) dst[ox * R] = row[ox * stride_w_];
                        }
                    }
            }
        });
        const int8_t* wt = weight_.data<int8_t>();
        const int64_t out_per_group = k.outch / group_;
        const bool requant = int8_scale_term_ > 100;
        ctx.parallel_for(k.outch, [&](int64_t begin, int64_t end) {
            for (int64_t oc = begin; oc < end; ++oc) {
                const int8_t* wrow = wt + oc * R;
                const int8_t* gcol = cp + (oc / out_per_group) * plane * R;
                const float scale_in = dequant_factor(bottom_scale_, w_scale_[oc]);
                const float b = bias ? bias[oc] : 0.f;
                for (int64_t p = 0; p < plane; ++p) {
                    const int8_t* c = gcol + p * R;
                    int32_t sum = 0;
                    for (int64_t r = 0; r < R; ++r) sum += static_cast<int16_t>(wrow[r]) * static_cast<int16_t>(c[r]);
                    const float v = activation_(dequant(sum, scale_in, bias, b));
                    if (requant)
                        y.data<int8_t>()[oc * plane + p] = float2int8(v * top_scale_);
                    else
                        y.data<float>()[oc * plane + p] = v;
                }
            }
        });
    }

    // sum * scale_in (+ bias), in ncnn's order.
    static float dequant(int32_t sum, float scale_in, const float* bias, float b)
    {
        const float v = static_cast<float>(sum) * scale_in;
        return bias ? v + b : v;
    }

    // ncnn's deprecated 1-D input path: InnerProduct over the flat input.
    void forward_flat(const Tensor& x, Tensor& y, const ExecContext& ctx) const
    {
        const int64_t n = num_flat_inputs();
        const float* bias = bias_.defined() ? bias_.data<float>() : nullptr;
        float* dst = y.data<float>();
        if (int8_scale_term_ == 0) {
            const float* xs = x.data<float>();
            const float* w = weight_.data<float>();
            ctx.parallel_for(num_output_, [&](int64_t begin, int64_t end) {
                for (int64_t o = begin; o < end; ++o) {
                    float sum = bias ? bias[o] : 0.f;
                    for (int64_t i = 0; i < n; ++i) sum += w[o * n + i] * xs[i];
                    dst[o] = activation_(sum);
                }
            });
            return;
        }
        const Tensor xq = quantize_input(x.reshaped({1, n}), ctx);
        const int8_t* xs = xq.data<int8_t>();
        const int8_t* w = weight_.data<int8_t>();
        ctx.parallel_for(num_output_, [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
                int32_t sum = 0;
                for (int64_t i = 0; i < n; ++i) sum += static_cast<int32_t>(w[o * n + i]) * xs[i];
                const float v = static_cast<float>(sum) * dequant_factor(bottom_scale_, w_scale_[o]);
                dst[o] = activation_(bias ? v + bias[o] : v);
            }
        });
    }

    bool depthwise_;
    bool dynamic_ = false;
    int num_output_ = 0, kernel_w_ = 0, kernel_h_ = 0, dilation_w_ = 1, dilation_h_ = 1, stride_w_ = 1, stride_h_ = 1;
    int pad_left_ = 0, pad_right_ = 0, pad_top_ = 0, pad_bottom_ = 0, same_ = 0;
    float pad_value_ = 0.f;
    bool bias_term_ = false;
    int weight_data_size_ = 0, group_ = 1, int8_scale_term_ = 0;
    int64_t in_channels_ = 0;
    Activation activation_;
    Tensor weight_, bias_;
    std::vector<float> w_scale_; // per output channel (int8)
    float bottom_scale_ = 0.f, top_scale_ = 0.f;
};

} // namespace

std::unique_ptr<Op> make_convolution() { return std::make_unique<Convolution>(false); }
std::unique_ptr<Op> make_convolution_depthwise() { return std::make_unique<Convolution>(true); }

} // namespace kestrel
