#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_prior_box();
std::unique_ptr<Op> make_detection_output();
std::unique_ptr<Op> make_yolo_detection_output();
std::unique_ptr<Op> make_yolov3_detection_output();

std::vector<BuiltinOp> detection_ops()
{
    return {
        {"PriorBox", make_prior_box},
        {"DetectionOutput", make_detection_output},
        {"YoloDetectionOutput", make_yolo_detection_output},
        {"Yolov3DetectionOutput", make_yolov3_detection_output},
    };
}

} // namespace kestrel
