// Post-training int8 quantization in ncnn's conventions: calibrate() runs a
// float model on sample inputs and picks an int8 scale for the input of every
// layer that can run on int8 (ncnn2table's job); quantize_net() writes those
// layers with int8 weights, per-output-channel weight scales and the input
// scales (ncnn2int8's job). The result runs in Kestrel and, saved with
// save_param/save_model, in ncnn (int8_scale_term, int8-tagged weights).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kestrel/net.h"

namespace kestrel {

enum class CalibrationMethod {
    MinMax,     // threshold = max |x| seen
    KL,         // the threshold whose 128-level histogram is closest to the
                // 2048-bin one by KL divergence (as ncnn2table and TensorRT)
    Percentile, // the given percentile of the non-zero |x|
};

struct CalibrationOptions {
    CalibrationMethod method = CalibrationMethod::KL;
    double percentile = 99.99; // Percentile: share (in %) of |x| kept below the threshold
    int threads = 1;
};

// One set of model inputs, by input name.
using CalibrationSample = std::map<std::string, Tensor>;

// The int8 scale (127 / threshold) of the input blob of each layer that
// quantize_net can make int8, by blob name. Needs at least one sample; a
// sample the model cannot run is an error naming its index.
std::map<std::string, float> calibrate(const Net& net, const std::vector<CalibrationSample>& samples,
                                       const CalibrationOptions& options = {});

// Whether quantize_net makes this layer int8: a float Convolution (2-D),
// ConvolutionDepthWise or InnerProduct with weights of its own, no residual
// input and an input scale.
bool quantizable_layer(const Net& net, int layer);

// `out` becomes a copy of `net` (weights kept, so it can be saved) whose
// quantizable layers whose input 0 has a scale in `input_scales` are int8:
// weights rounded to int8 with a scale of 127 / max|w| per output channel
// (per group for ConvolutionDepthWise), int8_scale_term set (2, or 1 for
// ConvolutionDepthWise). With `requantize`, a convolution whose output only
// an int8 convolution reads writes int8 for it (int8_scale_term + 100, the
// reader's input scale as its top scale: ncnn2int8's fuse_requantize, the
// same values without a float pass between); other outputs stay float.
// Returns how many layers it made int8. The net must keep its loaded
// weights (LoadOptions::keep_loaded_weights).
int quantize_net(const Net& net, const std::map<std::string, float>& input_scales, Net& out,
                 bool requantize = true);

} // namespace kestrel
