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
#include <vector>

#include "kestrel/op.h"
#include "kestrel/param_dict.h"
#include "ops/activation.h"
#include "ops/window_nd.h"

namespace kestrel {

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
};
ConvWeights load_conv_weights(WeightReader& wr, const ConvParams& p);

// The bias input of a dynamic-weight layer: float32 with one value per output channel.
void check_bias_input(const TensorDesc& bias, int64_t out_channels);

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
