// N-d convolution and pooling: ncnn's 1-D/3-D layers (src/ops/convolution_nd.cpp)
// and the ONNX pools of any rank (src/ops/nd_pool.cpp), all on the kernels of
// src/ops/window_nd.cpp.
#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_convolution_1d();
std::unique_ptr<Op> make_convolution_3d();
std::unique_ptr<Op> make_convolution_depthwise_1d();
std::unique_ptr<Op> make_convolution_depthwise_3d();
std::unique_ptr<Op> make_deconvolution_1d();
std::unique_ptr<Op> make_deconvolution_3d();
std::unique_ptr<Op> make_deconvolution_depthwise_1d();
std::unique_ptr<Op> make_deconvolution_depthwise_3d();
std::unique_ptr<Op> make_nd_max_pool();
std::unique_ptr<Op> make_nd_average_pool();
std::unique_ptr<Op> make_nd_max_unpool();

std::vector<BuiltinOp> convpool_ops()
{
    return {
        {"Convolution1D", make_convolution_1d},
        {"Convolution3D", make_convolution_3d},
        {"ConvolutionDepthWise1D", make_convolution_depthwise_1d},
        {"ConvolutionDepthWise3D", make_convolution_depthwise_3d},
        {"Deconvolution1D", make_deconvolution_1d},
        {"Deconvolution3D", make_deconvolution_3d},
        {"DeconvolutionDepthWise1D", make_deconvolution_depthwise_1d},
        {"DeconvolutionDepthWise3D", make_deconvolution_depthwise_3d},
        {"MaxPool", make_nd_max_pool},
        {"AveragePool", make_nd_average_pool},
        {"MaxUnpool", make_nd_max_unpool},
    };
}

} // namespace kestrel
