// The ncnn params shared by Convolution and Deconvolution of every rank (and
// their DepthWise types), parsed and validated in one place, and the per-axis
// geometry both families derive from them: SAME or explicit pads for a
// convolution, the cut of the full output for a deconvolution.
//
// Params: 0 num_output, the window (kernel 1/11/21, dilation 2/12/22, stride
// 3/13/23, pads 4/14/24 and 15/16/17, see window::read_ncnn_window), 5 bias_term,
// 6 weight_data_size, 7 group (DepthWise types), 9/10 activation, and the
// dynamic-weight flag (19 for convolution, 28 for deconvolution).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/op.h"
#include "kestrel/param_dict.h"
#include "ops/activation/activation.h"
#include "ops/common/sliding_window.h"

namespace kestrel {

// Kestrel's param of a 2-D Convolution/ConvolutionDepthWise: 1 = the last
// input is a residual added to the sums before the activation (set by the
// optimizer when it fuses a sum into the layer; ncnn has no such param).
constexpr int kResidualParam = 20;

struct ConvParams {
    bool dynamic = false; // weights (and bias) are inputs 1 (and 2)
    int num_output = 0;
    window::NcnnWindow window; // our axis order (outermost first)
    bool bias_term = false;
    int64_t weight_data_size = 0;
    int group = 1;
    Activation activation;
    int64_t in_channels = 0; // from weight_data_size; 0 with dynamic weights

    static ConvParams read(const ParamDict& pd, int rank, bool depthwise, int dynamic_id);

    // x, or x, weight (and bias) with dynamic weights.
    size_t input_count() const { return dynamic ? (bias_term ? 3 : 2) : 1; }
};

// Deconvolution's output params by axis (our order): output_pad (18/19/20) and
// an output size (20/21 for 1-D/2-D, 25/26/27 for 3-D) that, with SAME pads,
// cuts the full output to that size.
struct DeconvOutputParams {
    std::vector<int64_t> pad, size;
    bool cut_to_size = false;

    static DeconvOutputParams read(const ParamDict& pd, int rank, const window::NcnnWindow& w);
};

// The static weights [weight_data_size] and, with bias_term, the bias [num_output].
struct ConvWeights {
    Tensor weight, bias;

    int64_t bytes() const;
    // What a forward uses: these, or with dynamic weights the inputs in[1] and
    // in[2] (bias: null when there is none).
    const float* weight_data(const ConvParams& p, const std::vector<Tensor>& in) const;
    const float* bias_data(const ConvParams& p, const std::vector<Tensor>& in) const;
};
// Nothing with dynamic weights.
ConvWeights load_conv_weights(WeightReader& wr, const ConvParams& p);
// The same for layers without an int8 path: float32 weights only.
ConvWeights load_f32_conv_weights(WeightReader& wr, const ConvParams& p, const std::string& layer_type);

// The channels and kernel (our axis order) a layer uses: from the params and
// weight_data_size, or from the dynamic weight input in[1] in ONNX order,
// convolution (outch, inch/group, kernel...) and deconvolution (inch,
// outch/group, kernel...); 2-D layers also take ncnn's (outch or inch, kh, kw)
// form, one channel per group. A dynamic layer's bias input in[2] is checked too.
struct ConvKernel {
    int64_t outch = 0, inch = 0;
    std::vector<int64_t> kernel;
};
ConvKernel conv_kernel(const ConvParams& p, const std::vector<TensorDesc>& in, int rank, bool transposed);
// The same from the inputs of a forward.
ConvKernel conv_kernel(const ConvParams& p, const std::vector<Tensor>& in, int rank, bool transposed);
// The kernel, after checking (for infer) that in[0] is (channels, `rank`
// spatial dims) with the channels the kernel takes.
ConvKernel conv_kernel_for_input(const ConvParams& p, const std::vector<TensorDesc>& in, int rank, bool transposed);

// Convolution along spatial axis i (input size `in`, `kernel` taps): stride and
// dilation from the params, pads explicit or SAME; pad_end is the padding
// after the input. Throws when the kernel does not fit the padded input.
struct ConvAxis {
    window::Axis axis;
    int64_t pad_end = 0;
};
ConvAxis conv_axis(const ConvParams& p, size_t i, int64_t in, int64_t kernel);

// Deconvolution along spatial axis i: the full output (in-1)*stride + extent +
// output_pad, of which axis.out positions are kept after cutting
// axis.pad_begin from its start (by the pads, or to the output size, the odd
// position cut at the end for SAME_UPPER). Throws when nothing is kept or the
// output size exceeds the full output.
struct DeconvAxis {
    window::Axis axis;
    int64_t full = 0;
};
DeconvAxis deconv_axis(const ConvParams& p, const DeconvOutputParams& o, size_t i, int64_t in, int64_t kernel);

} // namespace kestrel
