// The detection family. Detection heads and their box logic: PriorBox, DetectionOutput (SSD),
// YOLO decoders, NonMaxSuppression, Faster R-CNN's Proposal, region pooling (ROIAlign,
// ROIPooling, PSROIPooling); nms.h and yolo.h are shared.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_prior_box();
std::unique_ptr<Op> make_detection_output();
std::unique_ptr<Op> make_yolo_detection_output();
std::unique_ptr<Op> make_yolov3_detection_output();
std::unique_ptr<Op> make_non_max_suppression();
std::unique_ptr<Op> make_roi_align();
std::unique_ptr<Op> make_roi_pooling();
std::unique_ptr<Op> make_psroi_pooling();
std::unique_ptr<Op> make_proposal();

std::vector<BuiltinOp> detection_family()
{
    return {
        {"PriorBox", make_prior_box},
        {"DetectionOutput", make_detection_output},
        {"YoloDetectionOutput", make_yolo_detection_output},
        {"Yolov3DetectionOutput", make_yolov3_detection_output},
        {"NonMaxSuppression", make_non_max_suppression},
        {"ROIAlign", make_roi_align},
        {"ROIPooling", make_roi_pooling},
        {"PSROIPooling", make_psroi_pooling},
        {"Proposal", make_proposal},
    };
}

} // namespace kestrel
