#include "ops/builtin_ops.h"

namespace kestrel {

const std::vector<BuiltinOp>& builtin_ops()
{
    static const std::vector<BuiltinOp> table = {
        {"Input", make_input},
        {"Split", make_split},
        {"Flatten", make_flatten},
        {"Noop", make_noop},
        {"Reshape", make_reshape},
        {"Convolution", make_convolution},
        {"ConvolutionDepthWise", make_convolution_depthwise},
        {"Pooling", make_pooling},
        {"InnerProduct", make_inner_product},
        {"Eltwise", make_eltwise},
        {"BinaryOp", make_binary_op},
        {"UnaryOp", make_unary_op},
        {"ReLU", make_relu},
        {"Clip", make_clip},
        {"Sigmoid", make_sigmoid},
        {"Swish", make_swish},
        {"HardSigmoid", make_hard_sigmoid},
        {"HardSwish", make_hard_swish},
        {"GELU", make_gelu},
        {"Mish", make_mish},
        {"TanH", make_tanh},
        {"Dropout", make_dropout},
    };
    return table;
}

} // namespace kestrel
