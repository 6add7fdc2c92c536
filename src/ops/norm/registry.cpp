// The norm family. Normalizations: one statistics engine (normalization.cpp: LayerNorm,
// ncnn's form and the ONNX form that Layer/Instance/MeanVariance/BatchNormalization
// become; ncnn's InstanceNorm, GroupNorm, RMSNorm, MVN and Normalize), one
// per-channel op (ncnn's Scale, BatchNorm, Bias and PReLU), and LRN.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_layer_norm();
std::unique_ptr<Op> make_batch_norm();
std::unique_ptr<Op> make_scale();
std::unique_ptr<Op> make_lrn();
std::unique_ptr<Op> make_instance_norm();
std::unique_ptr<Op> make_group_norm();
std::unique_ptr<Op> make_rms_norm();
std::unique_ptr<Op> make_mvn();
std::unique_ptr<Op> make_normalize();
std::unique_ptr<Op> make_bias();
std::unique_ptr<Op> make_prelu();

std::vector<BuiltinOp> norm_family()
{
    return {
        {"LayerNorm", make_layer_norm},
        {"BatchNorm", make_batch_norm},
        {"Scale", make_scale},
        {"LRN", make_lrn},
        {"InstanceNorm", make_instance_norm},
        {"GroupNorm", make_group_norm},
        {"RMSNorm", make_rms_norm},
        {"MVN", make_mvn},
        {"Normalize", make_normalize},
        {"Bias", make_bias},
        {"PReLU", make_prelu},
    };
}

} // namespace kestrel
