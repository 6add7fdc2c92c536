// DetectionOutput's decoding and selection as data (see
// detection_output.cpp), for backends that run them themselves (the Vulkan
// backend).
#pragma once
#include "kestrel/op.h"

namespace kestrel {

struct SsdPlan {
    int64_t num_prior = 0, num_class = 0;
    bool mxnet = false;           // MXNet's layout: conf (num_class, num_prior), priors without variances
    float confidence_threshold = 0, nms_threshold = 0;
    int nms_top_k = -1, keep_top_k = -1; // -1: no limit
    float background_cut = 0;     // a prior decodes when its background score is below this
    float variances[4] = {0, 0, 0, 0}; // the layer's (MXNet's layout)
};

// False when `op` is no DetectionOutput layer.
bool ssd_plan(const Op& op, const std::vector<TensorDesc>& in, SsdPlan& plan);

} // namespace kestrel
