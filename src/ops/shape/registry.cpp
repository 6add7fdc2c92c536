// The shape family. Layers that move values without computing on them: views (Reshape,
// Flatten, Squeeze, Unsqueeze), joins and cuts (Concat, Split, Crop/Slice),
// reorders (Permute/Transpose, ShuffleChannel, DepthToSpace/PixelShuffle,
// SpaceToDepth/Reorg, ReverseSequence, Flip), padding, tiling and broadcasting,
// gathers and scatters (Embed: rows of a table), copies (CopyTo, DeepCopy), Diag, masks (Trilu,
// Compress), and the shape of a tensor as a value (Shape, Size).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_reshape();
std::unique_ptr<Op> make_flatten();
std::unique_ptr<Op> make_concat();
std::unique_ptr<Op> make_slice();
std::unique_ptr<Op> make_crop();
std::unique_ptr<Op> make_permute();
std::unique_ptr<Op> make_padding();
std::unique_ptr<Op> make_shuffle_channel();
std::unique_ptr<Op> make_reverse_sequence();
std::unique_ptr<Op> make_shape();
std::unique_ptr<Op> make_size();
std::unique_ptr<Op> make_squeeze();
std::unique_ptr<Op> make_expand_dims();
std::unique_ptr<Op> make_gather();
std::unique_ptr<Op> make_gather_elements();
std::unique_ptr<Op> make_gather_nd();
std::unique_ptr<Op> make_scatter_elements();
std::unique_ptr<Op> make_scatter_nd();
std::unique_ptr<Op> make_expand();
std::unique_ptr<Op> make_tile();
std::unique_ptr<Op> make_depth_to_space();
std::unique_ptr<Op> make_space_to_depth();
std::unique_ptr<Op> make_trilu();
std::unique_ptr<Op> make_compress();
std::unique_ptr<Op> make_flip();
std::unique_ptr<Op> make_pixel_shuffle();
std::unique_ptr<Op> make_reorg();
std::unique_ptr<Op> make_copy_to();
std::unique_ptr<Op> make_deep_copy();
std::unique_ptr<Op> make_diag();
std::unique_ptr<Op> make_embed();

std::vector<BuiltinOp> shape_family()
{
    return {
        {"Reshape", make_reshape},
        {"Flatten", make_flatten},
        {"Concat", make_concat},
        {"Slice", make_slice},
        {"Crop", make_crop},
        {"Permute", make_permute},
        {"Padding", make_padding},
        {"ShuffleChannel", make_shuffle_channel},
        {"ReverseSequence", make_reverse_sequence},
        {"Shape", make_shape},
        {"Size", make_size},
        {"Squeeze", make_squeeze},
        {"ExpandDims", make_expand_dims},
        {"Gather", make_gather},
        {"GatherElements", make_gather_elements},
        {"GatherND", make_gather_nd},
        {"ScatterElements", make_scatter_elements},
        {"ScatterND", make_scatter_nd},
        {"Expand", make_expand},
        {"Tile", make_tile},
        {"DepthToSpace", make_depth_to_space},
        {"SpaceToDepth", make_space_to_depth},
        {"Trilu", make_trilu},
        {"Compress", make_compress},
        {"Flip", make_flip},
        {"PixelShuffle", make_pixel_shuffle},
        {"Reorg", make_reorg},
        {"CopyTo", make_copy_to},
        {"DeepCopy", make_deep_copy},
        {"Diag", make_diag},
        {"Embed", make_embed},
    };
}

} // namespace kestrel
