// Layers with ONNX semantics for any rank and dtype (src/ops/nd_*.cpp), used by
// the ONNX importer. Where an ncnn layer of the same name has other semantics,
// the name carries the suffix ND. (The Where layer lives with the element-wise
// family, src/ops/nd_elementwise.cpp.)
#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_nd_shape();
std::unique_ptr<Op> make_nd_size();
std::unique_ptr<Op> make_nd_reshape();
std::unique_ptr<Op> make_nd_flatten();
std::unique_ptr<Op> make_nd_squeeze();
std::unique_ptr<Op> make_nd_unsqueeze();
std::unique_ptr<Op> make_nd_transpose();
std::unique_ptr<Op> make_nd_gather();
std::unique_ptr<Op> make_nd_gather_elements();
std::unique_ptr<Op> make_nd_gather_nd();
std::unique_ptr<Op> make_nd_scatter_elements();
std::unique_ptr<Op> make_nd_scatter_nd();
std::unique_ptr<Op> make_nd_slice();
std::unique_ptr<Op> make_nd_split();
std::unique_ptr<Op> make_nd_concat();
std::unique_ptr<Op> make_nd_expand();
std::unique_ptr<Op> make_nd_tile();
std::unique_ptr<Op> make_nd_constant_of_shape();
std::unique_ptr<Op> make_nd_range();
std::unique_ptr<Op> make_nd_cast();
std::unique_ptr<Op> make_nd_pad();
std::unique_ptr<Op> make_nd_depth_to_space();
std::unique_ptr<Op> make_nd_space_to_depth();
std::unique_ptr<Op> make_nd_trilu();
std::unique_ptr<Op> make_nd_one_hot();
std::unique_ptr<Op> make_nd_cumsum();
std::unique_ptr<Op> make_nd_nonzero();
std::unique_ptr<Op> make_nd_topk();
std::unique_ptr<Op> make_nd_argmax();
std::unique_ptr<Op> make_nd_argmin();
std::unique_ptr<Op> make_nd_eye_like();
std::unique_ptr<Op> make_nd_compress();

std::unique_ptr<Op> make_resize();

std::vector<BuiltinOp> nd_ops()
{
    return {
        {"Resize", make_resize},
        {"Shape", make_nd_shape},
        {"Size", make_nd_size},
        {"ReshapeND", make_nd_reshape},
        {"FlattenND", make_nd_flatten},
        {"SqueezeND", make_nd_squeeze},
        {"Unsqueeze", make_nd_unsqueeze},
        {"Transpose", make_nd_transpose},
        {"Gather", make_nd_gather},
        {"GatherElements", make_nd_gather_elements},
        {"GatherND", make_nd_gather_nd},
        {"ScatterElements", make_nd_scatter_elements},
        {"ScatterND", make_nd_scatter_nd},
        {"SliceND", make_nd_slice},
        {"SplitND", make_nd_split},
        {"ConcatND", make_nd_concat},
        {"Expand", make_nd_expand},
        {"TileND", make_nd_tile},
        {"ConstantOfShape", make_nd_constant_of_shape},
        {"Range", make_nd_range},
        {"CastND", make_nd_cast},
        {"Pad", make_nd_pad},
        {"DepthToSpace", make_nd_depth_to_space},
        {"SpaceToDepth", make_nd_space_to_depth},
        {"Trilu", make_nd_trilu},
        {"OneHot", make_nd_one_hot},
        {"CumSum", make_nd_cumsum},
        {"NonZero", make_nd_nonzero},
        {"TopK", make_nd_topk},
        {"ArgMaxND", make_nd_argmax},
        {"ArgMin", make_nd_argmin},
        {"EyeLike", make_nd_eye_like},
        {"Compress", make_nd_compress},
    };
}

} // namespace kestrel
