// Deconvolution and DeconvolutionDepthWise (ncnn params; one class, the
// depthwise type adds param 7 = group). Input (c,h,w) -> (num_output,outh,outw).
//
// Weights are [outch][inch][kh][kw] (depthwise: [group][outch/g][inch/g][kh][kw]),
// then bias [num_output]. Each input pixel scatters kernel*value into the full
// ("bordered") output of size (in-1)*stride + dilation*(k-1)+1 + output_pad; then
//  * explicit pads (any > 0) are cut from the four sides,
//  * or with output_w/output_h (20/21) > 0 and pads -233/-234 the full output is
//    cut to that size, the odd pixel cut at the end (SAME_UPPER) or start (LOWER),
//  * otherwise the full output is the result.
// The activation (9/10) is applied per element.
// Dynamic weight (28 = 1): inputs [x, W, (bias)] with W in ONNX order, our shape
// (inch, outch/group, kh, kw) = ncnn [w=kw, h=kh, d=outch/group, c=inch].
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

struct DeconvKernel {
    int64_t kw = 0, kh = 0;
    int64_t outch = 0, inch = 0;
};

struct DeconvGeometry {
    int64_t full_h = 0, full_w = 0; // before cutting
    int64_t cut_top = 0, cut_left = 0;
    int64_t out_h = 0, out_w = 0;
};

class Deconvolution : public Op {
public:
    explicit Deconvolution(bool depthwise) : depthwise_(depthwise) {}

    void load_param(const ParamDict& pd) override
    {
        const int dyn = pd.get_int(28, 0);
        check(dyn == 0 || dyn == 1, "dynamic_weight (param 28) must be 0 or 1, got ", dyn);
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
        output_pad_right_ = pd.get_int(18, 0);
        output_pad_bottom_ = pd.get_int(19, output_pad_right_);
        check(output_pad_right_ >= 0 && output_pad_bottom_ >= 0, "output_pad (params 18/19) must be >= 0, got ",
              output_pad_right_, "/", output_pad_bottom_);
        output_w_ = pd.get_int(20, 0);
        output_h_ = pd.get_int(21, output_w_);
        check(output_w_ >= 0 && output_h_ >= 0, "output_w/output_h (params 20/21) must be >= 0, got ", output_w_, "/",
              output_h_);
        const bool any_pad = pad_left_ > 0 || pad_right_ > 0 || pad_top_ > 0 || pad_bottom_ > 0;
        // ncnn cuts to output_w/h only with SAME pads; with zero pads it produces no output at all.
        check(!(output_w_ > 0 && output_h_ > 0 && !any_pad && same_ == 0),
              "output_w/output_h (params 20/21) need pads -233 or -234");
        bias_term_ = pd.get_int(5, 0) != 0;
        weight_data_size_ = pd.get_int(6, 0);
        group_ = depthwise_ ? positive_param(pd, 7, 1, "group") : 1;
        activation_ = Activation::from_ncnn(pd.get_int(9, 0), pd.get_floats(10));
        check(num_output_ % group_ == 0, "num_output ", num_output_, " is not divisible by group ", group_);
        if (dynamic_) return;
        const int64_t per_input = static_cast<int64_t>(num_output_) * kernel_w_ * kernel_h_;
        check(weight_data_size_ > 0 && weight_data_size_ % per_input == 0, "weight_data_size (param 6) ",
              weight_data_size_, " is not a positive multiple of num_output*kernel_h*kernel_w = ", per_input);
        in_channels_ = weight_data_size_ / per_input * group_;
    }

    void load_model(WeightReader& wr) override
    {
        if (dynamic_) return;
        Tensor weight = wr.load(weight_data_size_, WeightEncoding::Tagged);
        Tensor bias = bias_term_ ? wr.load(num_output_, WeightEncoding::Raw) : Tensor();
        check(weight.dtype() == DType::F32, "int8 weights are not supported by deconvolution");
        weight_ = weight;
        bias_ = bias;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const size_t n_in = dynamic_ ? (bias_term_ ? 3 : 2) : 1;
        expect_input_count(in, n_in, n_in);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        check(s.size() == 3, "expects a (c,h,w) input, got ", shape_str(s));
        const DeconvKernel k = kernel_dims(in);
        check(s[0] == k.inch, "expects ", k.inch, " input channels (",
              dynamic_ ? "from the weight input" : "from weight_data_size", "), got ", s[0]);
        check(s[1] > 0 && s[2] > 0, "expects a non-empty spatial size, got ", shape_str(s));
        const DeconvGeometry g = geometry(s[1], s[2], k);
        check(g.out_h > 0 && g.out_w > 0, "the output ", g.out_h, "x", g.out_w, " (", g.full_h, "x", g.full_w,
              " before cutting the pads) is empty");
        check(g.cut_top >= 0 && g.cut_left >= 0 && g.cut_top + g.out_h <= g.full_h && g.cut_left + g.out_w <= g.full_w,
              "output_w/output_h ", output_w_, "x", output_h_, " exceed the full deconvolution output ", g.full_w, "x",
              g.full_h);
        out[0] = make_desc({k.outch, g.out_h, g.out_w}, DType::F32);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&) const override
    {
        const DeconvKernel k = kernel_dims(in);
        return shape_numel(in[0].shape) * (k.outch / group_) * k.kh * k.kw;
    }

    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>((weight_.defined() ? weight_.nbytes() : 0) + (bias_.defined() ? bias_.nbytes() : 0));
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        std::vector<TensorDesc> descs;
        for (const Tensor& t : in) descs.push_back(make_desc(t.shape(), t.dtype()));
        const DeconvKernel k = kernel_dims(descs);
        const Tensor& x = in[0];
        const int64_t h = x.dim(1), w = x.dim(2);
        const DeconvGeometry g = geometry(h, w, k);
        const int64_t inch_g = k.inch / group_, outch_g = k.outch / group_, ksize = k.kh * k.kw;

        // Weights as [outch][inch/g][kh][kw]; the dynamic input is [inch][outch/g][kh][kw] per group.
        Tensor wt_t;
        const float* wt = nullptr;
        const float* bias = nullptr;
        if (dynamic_) {
            wt_t = Tensor({k.outch * inch_g * ksize}, DType::F32);
            const float* src = in[1].data<float>();
            float* dst = wt_t.data<float>();
            for (int64_t gi = 0; gi < group_; ++gi)
                for (int64_t o = 0; o < outch_g; ++o)
                    for (int64_t i = 0; i < inch_g; ++i)
                        std::memcpy(dst + ((gi * outch_g + o) * inch_g + i) * ksize,
                                    src + ((gi * inch_g + i) * outch_g + o) * ksize, sizeof(float) * ksize);
            wt = wt_t.data<float>();
            if (bias_term_) bias = in[2].data<float>();
        } else {
            wt = weight_.data<float>();
            if (bias_.defined()) bias = bias_.data<float>();
        }

        const float* src = x.data<float>();
        float* dst = out[0].data<float>();
        const int64_t full_plane = g.full_h * g.full_w, out_plane = g.out_h * g.out_w;
        const bool cut = g.full_h != g.out_h || g.full_w != g.out_w;
        ctx.parallel_for(k.outch, [&](int64_t begin, int64_t end) {
            std::vector<float> full(cut ? static_cast<size_t>(full_plane) : 0);
            for (int64_t oc = begin; oc < end; ++oc) {
                float* f = cut ? full.data() : dst + oc * out_plane;
                std::fill(f, f + full_plane, bias ? bias[oc] : 0.f);
                const int64_t grp = oc / outch_g;
                for (int64_t ic = 0; ic < inch_g; ++ic) {
                    const float* xp = src + (grp * inch_g + ic) * h * w;
                    const float* kp = wt + (oc * inch_g + ic) * ksize;
                    for (int64_t ky = 0; ky < k.kh; ++ky)
                        for (int64_t kx = 0; kx < k.kw; ++kx) {
                            const float kv = kp[ky * k.kw + kx];
                            for (int64_t y = 0; y < h; ++y) {
                                float* orow = f + (y * stride_h_ + ky * dilation_h_) * g.full_w + kx * dilation_w_;
                                const float* xrow = xp + y * w;
                                for (int64_t xx = 0; xx < w; ++xx) orow[xx * stride_w_] += xrow[xx] * kv;
                            }
                        }
                }
                if (cut) {
                    float* o = dst + oc * out_plane;
                    for (int64_t y = 0; y < g.out_h; ++y)
                        std::memcpy(o + y * g.out_w, f + (y + g.cut_top) * g.full_w + g.cut_left,
                                    sizeof(float) * g.out_w);
                }
                activation_.apply(dst + oc * out_plane, out_plane);
            }
        });
    }

private:
    DeconvKernel kernel_dims(const std::vector<TensorDesc>& in) const
    {
        DeconvKernel k;
        if (!dynamic_) {
            k.kw = kernel_w_, k.kh = kernel_h_, k.outch = num_output_, k.inch = in_channels_;
            return k;
        }
        const TensorDesc& w = in[1];
        check(w.dtype == DType::F32, "the weight input must be float32, got ", dtype_name(w.dtype));
        check(w.shape.size() == 3 || w.shape.size() == 4,
              "the weight input must be (inch, outch/group, kh, kw) or (inch, kh, kw), got ", shape_str(w.shape));
        const NcnnDims d = ncnn_dims(w.shape);
        k.kw = d.w, k.kh = d.h, k.outch = d.d * group_, k.inch = d.c;
        check(k.kw > 0 && k.kh > 0 && k.outch > 0 && k.inch > 0, "the weight input ", shape_str(w.shape),
              " must not be empty");
        check(k.inch % group_ == 0, "the weight input's ", k.inch, " input channels are not divisible by group ",
              group_);
        if (bias_term_) {
            check(in[2].dtype == DType::F32, "the bias input must be float32, got ", dtype_name(in[2].dtype));
            check(shape_numel(in[2].shape) == k.outch, "the bias input has ", shape_numel(in[2].shape),
                  " values, expected ", k.outch, " (output channels)");
        }
        return k;
    }

    DeconvGeometry geometry(int64_t h, int64_t w, const DeconvKernel& k) const
    {
        DeconvGeometry g;
        const int64_t extent_w = static_cast<int64_t>(dilation_w_) * (k.kw - 1) + 1;
        const int64_t extent_h = static_cast<int64_t>(dilation_h_) * (k.kh - 1) + 1;
        g.full_w = (w - 1) * stride_w_ + extent_w + output_pad_right_;
        g.full_h = (h - 1) * stride_h_ + extent_h + output_pad_bottom_;
        g.out_w = g.full_w, g.out_h = g.full_h;
        const bool any_pad = pad_left_ > 0 || pad_right_ > 0 || pad_top_ > 0 || pad_bottom_ > 0;
        if (any_pad) {
            g.cut_left = pad_left_, g.cut_top = pad_top_;
            g.out_w = g.full_w - pad_left_ - pad_right_;
            g.out_h = g.full_h - pad_top_ - pad_bottom_;
        } else if (output_w_ > 0 && output_h_ > 0) {
            const int64_t wcut = g.full_w - output_w_, hcut = g.full_h - output_h_;
            const bool upper = same_ == kSameUpper;
            g.cut_left = upper ? wcut / 2 : wcut - wcut / 2;
            g.cut_top = upper ? hcut / 2 : hcut - hcut / 2;
            g.out_w = output_w_, g.out_h = output_h_;
        }
        return g;
    }

    bool depthwise_;
    bool dynamic_ = false;
    int num_output_ = 0, kernel_w_ = 0, kernel_h_ = 0, dilation_w_ = 1, dilation_h_ = 1, stride_w_ = 1, stride_h_ = 1;
    int pad_left_ = 0, pad_right_ = 0, pad_top_ = 0, pad_bottom_ = 0, same_ = 0;
    int output_pad_right_ = 0, output_pad_bottom_ = 0, output_w_ = 0, output_h_ = 0;
    bool bias_term_ = false;
    int weight_data_size_ = 0, group_ = 1;
    int64_t in_channels_ = 0;
    Activation activation_;
    Tensor weight_, bias_;
};

} // namespace

std::unique_ptr<Op> make_deconvolution() { return std::make_unique<Deconvolution>(false); }
std::unique_ptr<Op> make_deconvolution_depthwise() { return std::make_unique<Deconvolution>(true); }

} // namespace kestrel
