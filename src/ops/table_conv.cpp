#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_convolution();
std::unique_ptr<Op> make_convolution_depthwise();
std::unique_ptr<Op> make_pooling();
std::unique_ptr<Op> make_inner_product();

std::vector<BuiltinOp> conv_ops()
{
    return {
        {"Convolution", make_convolution},
        {"ConvolutionDepthWise", make_convolution_depthwise},
        {"Pooling", make_pooling},
        {"InnerProduct", make_inner_product},
    };
}

} // namespace kestrel
