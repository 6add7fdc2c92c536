// A YOLO detection layer's decoding as data (YoloDetectionOutput, v2, and
// Yolov3DetectionOutput; see yolo.h), for backends that decode and select
// boxes themselves (the Vulkan backend): the score and area rules of the
// version and, per input grid, the anchor (w, h) of each box and the size the
// decoded sizes are divided by.
#pragma once
#include <vector>

#include "kestrel/op.h"

namespace kestrel {

struct YoloPlan {
    int num_class = 0, num_box = 0;
    float confidence_threshold = 0, nms_threshold = 0;
    bool v2 = false; // v2: softmax score, corner area, NMS by intersection / union; v3: logit score, decoded area, product test
    struct Grid {
        float size_w = 0, size_h = 0;
        std::vector<float> anchors; // (w, h) per box
    };
    std::vector<Grid> grids; // one per input
};

// False when `op` is no YoloDetectionOutput (v2) / Yolov3DetectionOutput layer.
bool yolov2_plan(const Op& op, const std::vector<TensorDesc>& in, YoloPlan& plan);
bool yolov3_plan(const Op& op, const std::vector<TensorDesc>& in, YoloPlan& plan);

} // namespace kestrel
