// The conv family. Convolution and deconvolution of every rank, with ncnn's params (the
// ONNX importer targets the same layers): conv_params.h parses them once;
// 2-D layers run on the GEMM and depthwise kernels (src/kernels/), the others
// on the N-d sliding-window kernels (common/sliding_window.h); DeformableConv2D; Unfold/Fold,
// the im2col of a convolution and its adjoint.
#include "ops/conv/conv_params.h"
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_convolution();
std::unique_ptr<Op> make_convolution_depthwise();
std::unique_ptr<Op> make_deconvolution();
std::unique_ptr<Op> make_deconvolution_depthwise();
std::unique_ptr<Op> make_convolution_1d();
std::unique_ptr<Op> make_convolution_3d();
std::unique_ptr<Op> make_convolution_depthwise_1d();
std::unique_ptr<Op> make_convolution_depthwise_3d();
std::unique_ptr<Op> make_deconvolution_1d();
std::unique_ptr<Op> make_deconvolution_3d();
std::unique_ptr<Op> make_deconvolution_depthwise_1d();
std::unique_ptr<Op> make_deconvolution_depthwise_3d();
std::unique_ptr<Op> make_unfold();
std::unique_ptr<Op> make_fold();
std::unique_ptr<Op> make_deformable_conv2d();

namespace {

// 2-D convolutions: bias switch 5, padding and a residual sum fuse in.
LayerTraits conv2d_traits()
{
    LayerTraits t;
    t.bias_param = 5;
    t.activations_by_vector_exp = true;
    t.residual_param = kResidualParam;
    return t;
}

} // namespace

std::vector<BuiltinOp> conv_family()
{
    return {
        {"Convolution", make_convolution, conv2d_traits()},
        {"ConvolutionDepthWise", make_convolution_depthwise, conv2d_traits()},
        {"Deconvolution", make_deconvolution},
        {"DeconvolutionDepthWise", make_deconvolution_depthwise},
        {"Convolution1D", make_convolution_1d},
        {"Convolution3D", make_convolution_3d},
        {"ConvolutionDepthWise1D", make_convolution_depthwise_1d},
        {"ConvolutionDepthWise3D", make_convolution_depthwise_3d},
        {"Deconvolution1D", make_deconvolution_1d},
        {"Deconvolution3D", make_deconvolution_3d},
        {"DeconvolutionDepthWise1D", make_deconvolution_depthwise_1d},
        {"DeconvolutionDepthWise3D", make_deconvolution_depthwise_3d},
        {"Unfold", make_unfold},
        {"Fold", make_fold},
        {"DeformableConv2D", make_deformable_conv2d},
    };
}

} // namespace kestrel
