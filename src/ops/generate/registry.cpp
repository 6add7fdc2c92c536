// The generate family. Layers that make tensors from params, weights or shapes: Constant,
// MemoryData, ConstantOfShape, Range, OneHot, EyeLike.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_constant();
std::unique_ptr<Op> make_memory_data();
std::unique_ptr<Op> make_constant_of_shape();
std::unique_ptr<Op> make_range();
std::unique_ptr<Op> make_one_hot();
std::unique_ptr<Op> make_eye_like();

std::vector<BuiltinOp> generate_family()
{
    return {
        {"Constant", make_constant},
        {"MemoryData", make_memory_data},
        {"ConstantOfShape", make_constant_of_shape},
        {"Range", make_range},
        {"OneHot", make_one_hot},
        {"EyeLike", make_eye_like},
    };
}

} // namespace kestrel
