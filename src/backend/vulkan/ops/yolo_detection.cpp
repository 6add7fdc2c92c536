// YoloDetectionOutput and Yolov3DetectionOutput (float32) on the GPU: every
// grid's candidates decoded in parallel in the CPU's order
// (shaders/yolo_candidates.comp, with the score and area rules, anchors and
// sizes the CPU layer resolves, ops/detection/yolo_plan.h),
// then ncnn's sort and greedy NMS in one invocation (shaders/detect_select.comp);
// the output's rows are counted on the device and read back, (n, 6).
#include <cstring>

#include "backend/vulkan/gpu_kernel.h"
#include "ops/detection/yolo_plan.h"

namespace kestrel::vulkan {

namespace {

constexpr int kMaxBoxes = 8; // anchors the push constants hold

struct PushGrid {
    int32_t h, w, num_class, num_box, first, softmax, corner_area;
    float size_w, size_h, threshold;
    float anchors[2 * kMaxBoxes];
};
static_assert(sizeof(PushGrid) <= 128, "push constants stay within Vulkan's guaranteed 128 bytes");

struct PushSelect {
    int32_t count, ratio;
    float threshold, label_offset;
};

template <class P> std::vector<uint8_t> bytes_of(const P& p)
{
    std::vector<uint8_t> b(sizeof p);
    std::memcpy(b.data(), &p, sizeof p);
    return b;
}

class YoloKernel final : public GpuKernel {
public:
    YoloKernel(std::shared_ptr<Device> device, const YoloPlan& plan, const std::vector<TensorDesc>& in)
        : device_(std::move(device))
    {
        int64_t count = 0;
        for (const TensorDesc& d : in) count += plan.num_box * d.shape[1] * d.shape[2];
        candidates_ = device_->buffer(size_t(std::max<int64_t>(count, 1)) * 8 * 4);
        order_ = device_->buffer(size_t(count * 3 + 2) * 4);
        y_ = device_->buffer(size_t(1 + count * 6) * 4);
        int64_t first = 0;
        for (size_t k = 0; k < in.size(); ++k) {
            inputs_.push_back(device_->buffer(size_t(shape_numel(in[k].shape)) * 4));
            PushGrid g{};
            g.h = int32_t(in[k].shape[1]), g.w = int32_t(in[k].shape[2]);
            g.num_class = plan.num_class, g.num_box = plan.num_box, g.first = int32_t(first);
            g.softmax = g.corner_area = plan.v2 ? 1 : 0;
            g.size_w = plan.grids[k].size_w, g.size_h = plan.grids[k].size_h, g.threshold = plan.confidence_threshold;
            std::copy(plan.grids[k].anchors.begin(), plan.grids[k].anchors.end(), g.anchors);
            const uint64_t cells = uint64_t(plan.num_box) * uint64_t(g.h * g.w);
            steps_.push_back(Dispatch{"yolo_candidates", {inputs_.back().get(), candidates_.get()}, bytes_of(g), cells, 64});
            first += int64_t(cells);
        }
        const PushSelect s{int32_t(count), plan.v2 ? 1 : 0, plan.nms_threshold, 1.f};
        steps_.push_back(Dispatch{"detect_select", {candidates_.get(), order_.get(), y_.get()}, bytes_of(s), 1, 1});
    }

    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override
    {
        for (size_t k = 0; k < in.size(); ++k) upload(in[k], *inputs_[k]);
        last_ms_ = device_->run(steps_);
        const float* y = static_cast<const float*>(y_->data());
        const int64_t n = static_cast<int64_t>(y[0]);
        out[0] = Tensor({n, 6}, DType::F32);
        if (n) std::memcpy(out[0].raw(), y + 1, size_t(n) * 6 * 4);
    }

private:
    std::shared_ptr<Device> device_;
    std::vector<std::unique_ptr<Buffer>> inputs_;
    std::unique_ptr<Buffer> candidates_, order_, y_;
    std::vector<Dispatch> steps_;
};

} // namespace

std::unique_ptr<DeviceKernel> make_yolo_detection_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                           const std::vector<TensorDesc>& in,
                                                           const std::vector<TensorDesc>& out)
{
    if (in.empty() || out.size() != 1) return nullptr;
    YoloPlan plan;
    const bool found = l.type == "YoloDetectionOutput" ? yolov2_plan(*l.op, in, plan) : yolov3_plan(*l.op, in, plan);
    if (!found || plan.num_box > kMaxBoxes || plan.grids.size() != in.size()) return nullptr;
    int64_t count = 0;
    for (const TensorDesc& d : in) {
        if (d.dtype != DType::F32 || d.shape.size() != 3) return nullptr;
        count += plan.num_box * d.shape[1] * d.shape[2];
    }
    if (count >= (int64_t{1} << 24)) return nullptr; // counts are read back as floats
    return std::make_unique<YoloKernel>(device, plan, in);
}

} // namespace kestrel::vulkan
