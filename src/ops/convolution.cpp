// Convolution and ConvolutionDepthWise (ncnn params; one class, the depthwise
// type adds param 7 = group). Input (c,h,w) -> output (num_output,outh,outw).
// The kernel here is the plain reference: pad, then accumulate per output channel.
#include <cstring>

#include "ops/activation.h"
#include "ops/builtin_ops.h"
#include "ops/op_util.h"

namespace kestrel {

namespace {

constexpr int kSameUpper = -233;
constexpr int kSameLower = -234;

struct ConvGeometry {
    int64_t pad_left, pad_right, pad_top, pad_bottom;
    int64_t out_h, out_w;
};

class Convolution : public Op {
public:
    explicit Convolution(bool depthwise) : depthwise_(depthwise) {}

    void load_param(const ParamDict& pd) override
    {
        num_output_ = positive_param(pd, 0, 0, "num_output");
        kernel_w_ = positive_param(pd, 1, 0, "kernel_w");
        kernel_h_ = positive_param(pd, 11, kernel_w_, "kernel_h");
        dilation_w_ = positive_param(pd, 2, 1, "dilation_w");
        dilation_h_ = positive_param(pd, 12, dilation_w_, "dilation_h");
        stride_w_ = positive_param(pd, 3, 1, "stride_w");
        stride_h_ = positive_param(pd, 13, stride_w_, "stride_h");
        pad_left_ = pd.get_int(4, 0);
        pad_right_ = pd.get_int(15, pad_left_);
        pad_top_ = pd.get_int(14, pad_left_);
        pad_bottom_ = pd.get_int(16, pad_top_);
        pad_value_ = pd.get_float(18, 0.f);
        bias_term_ = pd.get_int(5, 0) != 0;
        weight_data_size_ = pd.get_int(6, 0);
        group_ = depthwise_ ? positive_param(pd, 7, 1, "group") : 1;
        int8_scale_term_ = pd.get_int(8, 0);
        activation_ = Activation::from_ncnn(pd.get_int(9, 0), pd.get_floats(10));
        check(pd.get_int(19, 0) == 0, "dynamic weights (param 19) are not supported yet");
        check(int8_scale_term_ == 0, "int8 convolution (param 8) is not supported yet");
        for (int p : {pad_left_, pad_right_, pad_top_, pad_bottom_})
            check(p >= 0 || p == kSameUpper || p == kSameLower, "pad must be >= 0, -233 or -234, got ", p);
        check(num_output_ % group_ == 0, "num_output ", num_output_, " is not divisible by group ", group_);
        const int64_t per_input = static_cast<int64_t>(num_output_) * kernel_w_ * kernel_h_;
        check(weight_data_size_ > 0 && weight_data_size_ % per_input == 0, "weight_data_size ", weight_data_size_,
              " is not a multiple of num_output*kernel_h*kernel_w = ", per_input);
        in_channels_ = weight_data_size_ / per_input * group_;
    }

    void load_model(WeightReader& wr) override
    {
        weight_ = wr.load(weight_data_size_, WeightEncoding::Tagged);
        check(weight_.dtype() == DType::F32, "int8 weights need int8_scale_term (param 8)");
        bias_ = bias_term_ ? wr.load(num_output_, WeightEncoding::Raw) : Tensor();
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        check(s.size() == 3, "expects a (c,h,w) input, got ", shape_str(s));
        check(s[0] == in_channels_, "expects ", in_channels_, " input channels (from weight_data_size), got ", s[0]);
        const ConvGeometry g = geometry(s[1], s[2]);
        check(g.out_h > 0 && g.out_w > 0, "kernel ", kernel_h_, "x", kernel_w_, " (dilation ", dilation_h_, "x",
              dilation_w_, ") does not fit the padded input ", s[1], "x", s[2]);
        out[0] = TensorDesc{{num_output_, g.out_h, g.out_w}, DType::F32};
    }

    int64_t macs(const std::vector<TensorDesc>&, const std::vector<TensorDesc>& out) const override
    {
        return shape_numel(out[0].shape) * (in_channels_ / group_) * kernel_h_ * kernel_w_;
    }

    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>(weight_.nbytes() + (bias_.defined() ? bias_.nbytes() : 0));
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Tensor& x = in[0];
        const int64_t h = x.dim(1), w = x.dim(2);
        const ConvGeometry g = geometry(h, w);
        const Tensor padded = pad_input(x, g, ctx);
        const int64_t ph = padded.dim(1), pw = padded.dim(2);
        const int64_t in_per_group = in_channels_ / group_, out_per_group = num_output_ / group_;
        const int64_t ksize = static_cast<int64_t>(kernel_h_) * kernel_w_;
        const float* src = padded.data<float>();
        const float* wt = weight_.data<float>();
        float* dst = out[0].data<float>();
        const int64_t plane = g.out_h * g.out_w;
        ctx.parallel_for(num_output_, [&](int64_t begin, int64_t end) {
            for (int64_t oc = begin; oc < end; ++oc) {
                float* o = dst + oc * plane;
                const float b = bias_.defined() ? bias_.data<float>()[oc] : 0.f;
                for (int64_t i = 0; i < plane; ++i) o[i] = b;
                const int64_t grp = oc / out_per_group;
                for (int64_t ic = 0; ic < in_per_group; ++ic) {
                    const float* in_plane = src + (grp * in_per_group + ic) * ph * pw;
                    const float* k = wt + (oc * in_per_group + ic) * ksize;
                    for (int ky = 0; ky < kernel_h_; ++ky)
                        for (int kx = 0; kx < kernel_w_; ++kx)
                            accumulate_tap(o, in_plane + ky * dilation_h_ * pw + kx * dilation_w_, pw,
                                           k[ky * kernel_w_ + kx], g);
                }
                activation_.apply(o, plane);
            }
        });
    }

private:
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

    ConvGeometry geometry(int64_t h, int64_t w) const
    {
        ConvGeometry g{pad_left_, pad_right_, pad_top_, pad_bottom_, 0, 0};
        const int64_t extent_w = static_cast<int64_t>(dilation_w_) * (kernel_w_ - 1) + 1;
        const int64_t extent_h = static_cast<int64_t>(dilation_h_) * (kernel_h_ - 1) + 1;
        if (pad_left_ == kSameUpper || pad_left_ == kSameLower) {
            // ONNX SAME: total pad so that out = ceil(in / stride); the odd pixel goes after (UPPER) or before.
            const int64_t pw = std::max<int64_t>(0, extent_w + (w - 1) / stride_w_ * stride_w_ - w);
            const int64_t ph = std::max<int64_t>(0, extent_h + (h - 1) / stride_h_ * stride_h_ - h);
            const bool upper = pad_left_ == kSameUpper;
            g.pad_left = upper ? pw / 2 : pw - pw / 2;
            g.pad_right = pw - g.pad_left;
            g.pad_top = upper ? ph / 2 : ph - ph / 2;
            g.pad_bottom = ph - g.pad_top;
        }
        g.out_w = (w + g.pad_left + g.pad_right - extent_w) / stride_w_ + 1;
        g.out_h = (h + g.pad_top + g.pad_bottom - extent_h) / stride_h_ + 1;
        if (w + g.pad_left + g.pad_right < extent_w) g.out_w = 0;
        if (h + g.pad_top + g.pad_bottom < extent_h) g.out_h = 0;
        return g;
    }

    Tensor pad_input(const Tensor& x, const ConvGeometry& g, const ExecContext& ctx) const
    {
        if (g.pad_left == 0 && g.pad_right == 0 && g.pad_top == 0 && g.pad_bottom == 0) return x;
        const int64_t c = x.dim(0), h = x.dim(1), w = x.dim(2);
        const int64_t ph = h + g.pad_top + g.pad_bottom, pw = w + g.pad_left + g.pad_right;
        Tensor p({c, ph, pw}, DType::F32);
        const float* s = x.data<float>();
        float* d = p.data<float>();
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            for (int64_t ch = begin; ch < end; ++ch) {
                float* dp = d + ch * ph * pw;
                std::fill(dp, dp + ph * pw, pad_value_);
                for (int64_t y = 0; y < h; ++y)
                    std::memcpy(dp + (y + g.pad_top) * pw + g.pad_left, s + (ch * h + y) * w, sizeof(float) * w);
            }
        });
        return p;
    }

    bool depthwise_;
    int num_output_ = 0, kernel_w_ = 0, kernel_h_ = 0, dilation_w_ = 1, dilation_h_ = 1, stride_w_ = 1, stride_h_ = 1;
    int pad_left_ = 0, pad_right_ = 0, pad_top_ = 0, pad_bottom_ = 0;
    float pad_value_ = 0.f;
    bool bias_term_ = false;
    int weight_data_size_ = 0, group_ = 1, int8_scale_term_ = 0;
    int64_t in_channels_ = 0;
    Activation activation_;
    Tensor weight_, bias_;
};

} // namespace

std::unique_ptr<Op> make_convolution() { return std::make_unique<Convolution>(false); }
std::unique_ptr<Op> make_convolution_depthwise() { return std::make_unique<Convolution>(true); }

} // namespace kestrel
