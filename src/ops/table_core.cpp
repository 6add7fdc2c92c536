#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_input();
std::unique_ptr<Op> make_split();
std::unique_ptr<Op> make_flatten();
std::unique_ptr<Op> make_noop();
std::unique_ptr<Op> make_reshape();
std::unique_ptr<Op> make_eltwise();
std::unique_ptr<Op> make_relu();
std::unique_ptr<Op> make_clip();
std::unique_ptr<Op> make_sigmoid();
std::unique_ptr<Op> make_swish();
std::unique_ptr<Op> make_hard_sigmoid();
std::unique_ptr<Op> make_hard_swish();
std::unique_ptr<Op> make_gelu();
std::unique_ptr<Op> make_mish();
std::unique_ptr<Op> make_tanh();
std::unique_ptr<Op> make_dropout();
std::unique_ptr<Op> make_constant();
std::unique_ptr<Op> make_if_branch();

std::vector<BuiltinOp> core_ops()
{
    return {
        {"Input", make_input},
        {"Split", make_split},
        {"Flatten", make_flatten},
        {"Noop", make_noop},
        {"Reshape", make_reshape},
        {"Eltwise", make_eltwise},
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
        {"Constant", make_constant},
        {"If", make_if_branch},
    };
}

} // namespace kestrel
