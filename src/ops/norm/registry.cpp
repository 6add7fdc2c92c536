// The norm family. Normalizations: one normalization op (LayerNorm: ncnn's form and the
// ONNX form that Layer/Instance/MeanVariance/BatchNormalization become), one
// per-channel affine op (ncnn's Scale and BatchNorm), and LRN.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_layer_norm();
std::unique_ptr<Op> make_batch_norm();
std::unique_ptr<Op> make_scale();
std::unique_ptr<Op> make_lrn();

std::vector<BuiltinOp> norm_family()
{
    return {
        {"LayerNorm", make_layer_norm},
        {"BatchNorm", make_batch_norm},
        {"Scale", make_scale},
        {"LRN", make_lrn},
    };
}

} // namespace kestrel
