// The norm family. Normalizations: ncnn's BatchNorm, Scale, LayerNorm and LRN, and the one
// N-d normalization (NormalizeND) that the ONNX importer's Layer/Instance/
// MeanVariance/BatchNormalization become.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_layer_norm();
std::unique_ptr<Op> make_batch_norm();
std::unique_ptr<Op> make_scale();
std::unique_ptr<Op> make_lrn();
std::unique_ptr<Op> make_nd_normalize();

std::vector<BuiltinOp> norm_family()
{
    return {
        {"LayerNorm", make_layer_norm},
        {"BatchNorm", make_batch_norm},
        {"Scale", make_scale},
        {"LRN", make_lrn},
        {"NormalizeND", make_nd_normalize},
    };
}

} // namespace kestrel
