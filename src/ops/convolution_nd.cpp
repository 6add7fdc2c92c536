// Convolution1D/3D, ConvolutionDepthWise1D/3D, Deconvolution1D/3D and
// DeconvolutionDepthWise1D/3D (ncnn params): thin front-ends of the N-d
// kernels in window_nd. Input (c, w) for 1-D (ncnn's [w, h=c]) and (c, d, h, w)
// for 3-D; output (num_output, spatial...).
//
// Params as ncnn (src/layer/convolution1d.cpp, ...): 0 num_output, kernel /
// dilation / stride / pads by axis (see read_ncnn_window: 1/11/21, 2/12/22,
// 3/13/23, 4/14/24 and 15/16/17), 5 bias_term, 6 weight_data_size, 7 group
// (depthwise types), 9/10 activation; convolution: 18 pad_value;
// deconvolution: output_pad 18 (1-D) or 18/19/20 (w/h/d), output size 20
// (1-D) or 25/26/27, which with SAME pads (-233/-234) cuts the full output
// to that size, the odd position cut at the end (-233) or the start.
// Weights [num_output][inch/group][kernel...] then bias.
// Dynamic weight (19 for convolution, 28 for deconvolution; ncnn has it for
// the 1-D types, ours for 3-D too): inputs [x, W, (bias)] with W in ONNX order,
// (outch, inch/group, kernel...) for convolution and (inch, outch/group,
// kernel...) for deconvolution. int8 is not supported.
#include <algorithm>

#include "ops/activation.h"
#include "ops/builtin_ops.h"
#include "ops/op_util.h"
#include "ops/window_nd.h"

namespace kestrel {

namespace {

using window::Axis;

// Channels and kernel actually used: from params and weights, or from the weight input.
struct KernelShape {
    int64_t outch = 0, inch = 0;
    std::vector<int64_t> kernel;
};

class ConvolutionNd : public Op {
public:
    ConvolutionNd(int rank, bool depthwise, bool transposed)
        : rank_(rank), depthwise_(depthwise), transposed_(transposed)
    {
    }

    void load_param(const ParamDict& pd) override
    {
        const int dyn_id = transposed_ ? 28 : 19;
        const int dyn = pd.get_int(dyn_id, 0);
        check(dyn == 0 || dyn == 1, "dynamic_weight (param ", dyn_id, ") must be 0 or 1, got ", dyn);
        dynamic_ = dyn == 1;
        check(pd.get_int(8, 0) == 0, "int8 (param 8) is not supported by ", type);
        num_output_ = pd.get_int(0, 0);
        check(dynamic_ ? num_output_ >= 0 : num_output_ > 0, "num_output (param 0) must be > 0, got ", num_output_);
        window_ = window::read_ncnn_window(pd, rank_, {1, 3, 2, 4, 15}, !dynamic_);
        if (transposed_) read_output_params(pd);
        pad_value_ = transposed_ ? 0.f : pd.get_float(18, 0.f);
        bias_term_ = pd.get_int(5, 0) != 0;
        group_ = depthwise_ ? positive_param(pd, 7, 1, "group") : 1;
        check(num_output_ % group_ == 0, "num_output ", num_output_, " is not divisible by group ", group_);
        activation_ = Activation::from_ncnn(pd.get_int(9, 0), pd.get_floats(10));
        weight_data_size_ = pd.get_int(6, 0);
        if (dynamic_) return;
        // Multiply only while the product stays <= weight_data_size, so nothing overflows.
        check(weight_data_size_ > 0, "weight_data_size (param 6) must be > 0, got ", weight_data_size_);
        int64_t per_input = num_output_;
        for (int64_t k : window_.kernel) {
            check(per_input <= weight_data_size_ / k, "weight_data_size (param 6) ", weight_data_size_,
                  " is smaller than num_output * kernel size");
            per_input *= k;
        }
        check(weight_data_size_ % per_input == 0, "weight_data_size (param 6) ", weight_data_size_,
              " is not a multiple of num_output * kernel size = ", per_input);
        in_channels_ = weight_data_size_ / per_input * group_;
    }

    void load_model(WeightReader& wr) override
    {
        if (dynamic_) return;
        Tensor weight = wr.load(weight_data_size_, WeightEncoding::Tagged);
        check(weight.dtype() == DType::F32, "int8 weights are not supported by ", type);
        weight_ = weight;
        bias_ = bias_term_ ? wr.load(num_output_, WeightEncoding::Raw) : Tensor();
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const size_t n_in = dynamic_ ? (bias_term_ ? 3 : 2) : 1;
        expect_input_count(in, n_in, n_in);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        check(static_cast<int>(s.size()) == rank_ + 1, "expects a (channels, ", rank_, " spatial dims) input, got ",
              shape_str(s));
        const KernelShape k = kernel_shape(in);
        check(s[0] == k.inch, "expects ", k.inch, " input channels (",
              dynamic_ ? "from the weight input" : "from weight_data_size", "), got ", s[0]);
        const std::vector<Axis> axes = geometry(s, k);
        Shape o = {k.outch};
        for (const Axis& a : axes) o.push_back(a.out);
        out[0] = TensorDesc(o, DType::F32);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        const KernelShape k = kernel_shape(in);
        int64_t taps = 1;
        for (int64_t v : k.kernel) taps *= v;
        // Convolution: every output value sums inch/group * taps products; deconvolution: every input value scatters.
        return transposed_ ? shape_numel(in[0].shape) * (k.outch / group_) * taps
                           : shape_numel(out[0].shape) * (k.inch / group_) * taps;
    }

    int64_t weight_bytes() const override
    {
        return static_cast<int64_t>((weight_.defined() ? weight_.nbytes() : 0) + (bias_.defined() ? bias_.nbytes() : 0));
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        std::vector<TensorDesc> descs;
        for (const Tensor& t : in) descs.push_back(TensorDesc(t.shape(), t.dtype()));
        const KernelShape k = kernel_shape(descs);
        const std::vector<Axis> axes = geometry(in[0].shape(), k);
        const float* bias = dynamic_ ? (bias_term_ ? in[2].data<float>() : nullptr)
                                     : (bias_.defined() ? bias_.data<float>() : nullptr);
        const float* weight = dynamic_ ? in[1].data<float>() : weight_.data<float>();
        Tensor reordered;
        if (dynamic_ && transposed_) {
            reordered = Tensor({in[1].numel()}, DType::F32);
            window::deconv_weight_from_onnx(weight, k.inch, k.outch / group_, group_, window::kernel_size(axes),
                                            reordered.data<float>());
            weight = reordered.data<float>();
        }
        if (transposed_)
            window::deconv_forward(in[0], weight, bias, group_, axes, out[0], ctx);
        else
            window::conv_forward(in[0], weight, bias, group_, axes, pad_value_, out[0], ctx);
        activation_.apply(out[0].data<float>(), out[0].numel());
    }

private:
    void read_output_params(const ParamDict& pd)
    {
        const int pad_w = pd.get_int(18, 0);
        const int size_w = pd.get_int(rank_ == 1 ? 20 : 25, 0);
        for (int i = rank_ - 1; i >= 0; --i) { // ncnn axis i (w, h, d)
            const int pad = i == 0 ? pad_w : pd.get_int(18 + i, pad_w);
            const int size = i == 0 ? size_w : pd.get_int(25 + i, size_w);
            check(pad >= 0, "output_pad (param ", 18 + i, ") must be >= 0, got ", pad);
            check(size >= 0, "output size (param ", rank_ == 1 ? 20 : 25 + i, ") must be >= 0, got ", size);
            output_pad_.push_back(pad);
            output_size_.push_back(size);
        }
        const bool sized = std::all_of(output_size_.begin(), output_size_.end(), [](int64_t v) { return v > 0; });
        check(!sized || window_.same != 0 || any_explicit_pad(),
              "an output size (params 20 or 25/26/27) needs pads -233 or -234");
        cut_to_size_ = sized && !any_explicit_pad();
    }

    bool any_explicit_pad() const
    {
        return std::any_of(window_.pads.begin(), window_.pads.end(),
                           [](const window::Span& p) { return p.begin > 0 || p.end > 0; });
    }

    KernelShape kernel_shape(const std::vector<TensorDesc>& in) const
    {
        KernelShape k;
        if (!dynamic_) {
            k.outch = num_output_, k.inch = in_channels_, k.kernel = window_.kernel;
            return k;
        }
        const TensorDesc& w = in[1];
        check(w.dtype == DType::F32, "the weight input must be float32, got ", dtype_name(w.dtype));
        check(static_cast<int>(w.shape.size()) == rank_ + 2, "the weight input must have rank ", rank_ + 2, ", got ",
              shape_str(w.shape));
        for (int64_t d : w.shape) check(d > 0, "the weight input ", shape_str(w.shape), " must not be empty");
        k.kernel.assign(w.shape.begin() + 2, w.shape.end());
        // Convolution (outch, inch/group, k...); deconvolution (inch, outch/group, k...).
        k.outch = transposed_ ? w.shape[1] * group_ : w.shape[0];
        k.inch = transposed_ ? w.shape[0] : w.shape[1] * group_;
        check(k.outch % group_ == 0 && k.inch % group_ == 0, "the weight input's channels ", shape_str(w.shape),
              " do not fit group ", group_);
        for (int i = 0; i < rank_; ++i)
            check(window_.kernel[static_cast<size_t>(i)] == 0 || window_.kernel[static_cast<size_t>(i)] == k.kernel[static_cast<size_t>(i)],
                  "the weight input's kernel ", shape_str(w.shape), " differs from the kernel params");
        if (bias_term_) {
            check(in[2].dtype == DType::F32, "the bias input must be float32, got ", dtype_name(in[2].dtype));
            check(shape_numel(in[2].shape) == k.outch, "the bias input has ", shape_numel(in[2].shape),
                  " values, expected ", k.outch, " (output channels)");
        }
        return k;
    }

    std::vector<Axis> geometry(const Shape& s, const KernelShape& k) const
    {
        std::vector<Axis> axes(static_cast<size_t>(rank_));
        for (size_t i = 0; i < axes.size(); ++i) {
            Axis& a = axes[i];
            const int64_t in = s[i + 1];
            check(in > 0, "expects a non-empty spatial size, got ", shape_str(s));
            a.kernel = k.kernel[i], a.stride = window_.stride[i], a.dilation = window_.dilation[i];
            if (transposed_)
                deconv_axis(a, in, i);
            else
                conv_axis(a, in, i);
        }
        return axes;
    }

    void conv_axis(Axis& a, int64_t in, size_t i) const
    {
        const window::Span p = window_.same != 0 ? window::same_pads(in, a.stride, a.extent(), window_.same == window::kSameUpper)
                                                 : window_.pads[i];
        a.pad_begin = p.begin;
        a.out = window::window_count(in + p.begin + p.end, a.extent(), a.stride);
        check(a.out > 0, "kernel extent ", a.extent(), " does not fit the padded input size ", in + p.begin + p.end);
    }

    // The full output (in-1)*stride + extent + output_pad, then cut by the pads or to the output size.
    void deconv_axis(Axis& a, int64_t in, size_t i) const
    {
        const int64_t full = (in - 1) * a.stride + a.extent() + output_pad_[i];
        if (cut_to_size_) {
            const int64_t cut = full - output_size_[i];
            check(cut >= 0, "output size ", output_size_[i], " exceeds the full deconvolution output ", full);
            a.pad_begin = window_.same == window::kSameUpper ? cut / 2 : cut - cut / 2;
            a.out = output_size_[i];
            return;
        }
        const window::Span p = window_.same != 0 ? window::Span{} : window_.pads[i];
        a.pad_begin = p.begin;
        a.out = full - p.begin - p.end;
        check(a.out > 0, "the output is empty: full size ", full, " minus pads ", p.begin, "+", p.end);
    }

    int rank_;
    bool depthwise_, transposed_;
    bool dynamic_ = false, bias_term_ = false, cut_to_size_ = false;
    int num_output_ = 0, group_ = 1;
    int64_t weight_data_size_ = 0, in_channels_ = 0;
    window::NcnnWindow window_;
    std::vector<int64_t> output_pad_, output_size_; // deconvolution, our axis order
    float pad_value_ = 0.f;
    Activation activation_;
    Tensor weight_, bias_;
};

} // namespace

std::unique_ptr<Op> make_convolution_1d() { return std::make_unique<ConvolutionNd>(1, false, false); }
std::unique_ptr<Op> make_convolution_3d() { return std::make_unique<ConvolutionNd>(3, false, false); }
std::unique_ptr<Op> make_convolution_depthwise_1d() { return std::make_unique<ConvolutionNd>(1, true, false); }
std::unique_ptr<Op> make_convolution_depthwise_3d() { return std::make_unique<ConvolutionNd>(3, true, false); }
std::unique_ptr<Op> make_deconvolution_1d() { return std::make_unique<ConvolutionNd>(1, false, true); }
std::unique_ptr<Op> make_deconvolution_3d() { return std::make_unique<ConvolutionNd>(3, false, true); }
std::unique_ptr<Op> make_deconvolution_depthwise_1d() { return std::make_unique<ConvolutionNd>(1, true, true); }
std::unique_ptr<Op> make_deconvolution_depthwise_3d() { return std::make_unique<ConvolutionNd>(3, true, true); }

} // namespace kestrel
