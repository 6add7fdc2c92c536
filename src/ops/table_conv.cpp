#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_convolution();
std::unique_ptr<Op> make_convolution_depthwise();
std::unique_ptr<Op> make_deconvolution();
std::unique_ptr<Op> make_deconvolution_depthwise();
std::unique_ptr<Op> make_pooling();
std::unique_ptr<Op> make_inner_product();
std::unique_ptr<Op> make_quantize();
std::unique_ptr<Op> make_dequantize();
std::unique_ptr<Op> make_requantize();

std::vector<BuiltinOp> conv_ops()
{
    return {
        {"Convolution", make_convolution},
        {"ConvolutionDepthWise", make_convolution_depthwise},
        {"Deconvolution", make_deconvolution},
        {"DeconvolutionDepthWise", make_deconvolution_depthwise},
        {"Pooling", make_pooling},
        {"InnerProduct", make_inner_product},
        {"Quantize", make_quantize},
        {"Dequantize", make_dequantize},
        {"Requantize", make_requantize},
    };
}

} // namespace kestrel
