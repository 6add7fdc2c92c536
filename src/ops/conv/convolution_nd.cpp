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
// Parsed by ConvParams and DeconvOutputParams (conv_params.h), shared with the
// 2-D layers. Weights [num_output][inch/group][kernel...] then bias.
// Dynamic weight (19 for convolution, 28 for deconvolution; ncnn has it for
// the 1-D types, ours for 3-D too): inputs [x, W, (bias)] with W in ONNX order,
// (outch, inch/group, kernel...) for convolution and (inch, outch/group,
// kernel...) for deconvolution. int8 is not supported.

#include "ops/activation/activation.h"
#include "ops/registry.h"
#include "ops/conv/conv_params.h"
#include "ops/common/op_util.h"
#include "ops/common/sliding_window.h"

namespace kestrel {

namespace {

using window::Axis;

class ConvolutionNd : public Op {
public:
    ConvolutionNd(int rank, bool depthwise, bool transposed)
        : rank_(rank), depthwise_(depthwise), transposed_(transposed)
    {
    }

    void load_param(const ParamDict& pd) override
    {
        p_ = ConvParams::read(pd, rank_, depthwise_, transposed_ ? 28 : 19);
        check(pd.get_int(8, 0) == 0, "int8 (param 8) is not supported by ", type);
        if (transposed_) output_ = DeconvOutputParams::read(pd, rank_, p_.window);
        pad_value_ = transposed_ ? 0.f : pd.get_float(18, 0.f);
    }

    void load_model(WeightReader& wr) override
    {
        weights_ = load_f32_conv_weights(wr, p_, type);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, p_.input_count(), p_.input_count());
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        const ConvKernel k = conv_kernel_for_input(p_, in, rank_, transposed_);
        const std::vector<Axis> axes = geometry(s, k);
        Shape o = {k.outch};
        for (const Axis& a : axes) o.push_back(a.out);
        out[0] = TensorDesc(o, DType::F32);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        const ConvKernel k = conv_kernel(p_, in, rank_, transposed_);
        int64_t taps = 1;
        for (int64_t v : k.kernel) taps *= v;
        // Convolution: every output value sums inch/group * taps products; deconvolution: every input value scatters.
        return transposed_ ? shape_numel(in[0].shape) * (k.outch / p_.group) * taps
                           : shape_numel(out[0].shape) * (k.inch / p_.group) * taps;
    }

    int64_t weight_bytes() const override
    {
        return weights_.bytes();
    }

    // Scratch 0, with dynamic weights: them in our order.
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        if (p_.dynamic && transposed_) ctx.request_scratch(shape_numel(in[1].shape) * 4);
        return nullptr;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const ConvKernel k = conv_kernel(p_, in, rank_, transposed_);
        const std::vector<Axis> axes = geometry(in[0].shape(), k);
        const float* bias = weights_.bias_data(p_, in);
        const float* weight = weights_.weight_data(p_, in);
        if (p_.dynamic && transposed_) {
            float* reordered = ctx.scratch_as<float>(0);
            window::deconv_weight_from_onnx(weight, k.inch, k.outch / p_.group, p_.group, window::kernel_size(axes),
                                            reordered);
            weight = reordered;
        }
        if (transposed_)
            window::deconv_forward(in[0], weight, bias, p_.group, axes, out[0], ctx);
        else
            window::conv_forward(in[0], weight, bias, p_.group, axes, pad_value_, out[0], ctx);
        p_.activation.apply(out[0].data<float>(), out[0].numel());
    }

private:
    std::vector<Axis> geometry(const Shape& s, const ConvKernel& k) const
    {
        std::vector<Axis> axes(static_cast<size_t>(rank_));
        for (size_t i = 0; i < axes.size(); ++i) {
            const int64_t in = s[i + 1];
            check(in > 0, "expects a non-empty spatial size, got ", shape_str(s));
            axes[i] = transposed_ ? deconv_axis(p_, output_, i, in, k.kernel[i]).axis
                                  : conv_axis(p_, i, in, k.kernel[i]).axis;
        }
        return axes;
    }

    int rank_;
    bool depthwise_, transposed_;
    ConvParams p_;
    DeconvOutputParams output_; // deconvolution
    float pad_value_ = 0.f;
    ConvWeights weights_;
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
