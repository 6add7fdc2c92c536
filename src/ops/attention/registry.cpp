// The attention family. Attention: ncnn's MultiHeadAttention and SDPA (scaled dot-product
// attention, also what the optimizer fuses ONNX attention patterns into), RotaryEmbed.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_multi_head_attention();
std::unique_ptr<Op> make_sdpa();
std::unique_ptr<Op> make_rotary_embed();

std::vector<BuiltinOp> attention_family()
{
    return {
        {"MultiHeadAttention", make_multi_head_attention},
        {"SDPA", make_sdpa},
        {"RotaryEmbed", make_rotary_embed},
    };
}

} // namespace kestrel
