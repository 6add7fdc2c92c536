#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_concat();
std::unique_ptr<Op> make_slice();
std::unique_ptr<Op> make_crop();
std::unique_ptr<Op> make_permute();
std::unique_ptr<Op> make_padding();
std::unique_ptr<Op> make_shuffle_channel();
std::unique_ptr<Op> make_memory_data();

// Reshape, Flatten and Split (views) are registered with the core ops.
std::vector<BuiltinOp> data_ops()
{
    return {
        {"Concat", make_concat},
        {"Slice", make_slice},
        {"Crop", make_crop},
        {"Permute", make_permute},
        {"Padding", make_padding},
        {"ShuffleChannel", make_shuffle_channel},
        {"MemoryData", make_memory_data},
    };
}

} // namespace kestrel
