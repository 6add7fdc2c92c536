// The detection layers (float32) on the GPU: candidates decoded in parallel
// in the CPU's order, then ncnn's sort, top-k and greedy NMS
// (shaders/detect_select.comp: one invocation per group of candidates); the
// output's rows are counted on the device and read back, (n, 6).
//   YoloDetectionOutput, Yolov3DetectionOutput: every grid's candidates
//     (shaders/yolo_candidates.comp, with the score and area rules, anchors
//     and sizes the CPU layer resolves, ops/detection/yolo_plan.h), one NMS.
//   DetectionOutput: candidates per foreground class and prior
//     (shaders/ssd_candidates.comp, ops/detection/ssd_plan.h), each class
//     sorted, cut to nms_top_k and NMS'd, then all classes sorted and cut
//     to keep_top_k.
#include <cstring>

#include "backend/vulkan/gpu_kernel.h"
#include "ops/detection/ssd_plan.h"
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
    int32_t count, groups, top_k, nms, ratio, rows;
    float threshold, label_offset;
};

template <class P> std::vector<uint8_t> bytes_of(const P& p)
{
    std::vector<uint8_t> b(sizeof p);
    std::memcpy(b.data(), &p, sizeof p);
    return b;
}

struct PushSsd {
    int32_t num_prior, num_class, mxnet, prior_variances;
    float background_cut, threshold;
    float variances[4];
};

// Inputs uploaded, the steps run, the (n, 6) rows read back from y.
class DetectionKernel : public GpuKernel {
public:
    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override
    {
        for (size_t k = 0; k < in.size(); ++k) upload(in[k], *inputs_[k]);
        last_ms_ = device_->run(steps_);
        const float* y = static_cast<const float*>(y_->data());
        const int64_t n = static_cast<int64_t>(y[0]);
        out[0] = Tensor({n, 6}, DType::F32);
        if (n) std::memcpy(out[0].raw(), y + 1, size_t(n) * 6 * 4);
    }

protected:
    explicit DetectionKernel(std::shared_ptr<Device> device) : device_(std::move(device)) {}
    // Buffers for the inputs, the candidates and the sort's work, and the rows.
    void allocate(const std::vector<TensorDesc>& in, int64_t candidates, int64_t work, int64_t rows)
    {
        for (const TensorDesc& d : in) inputs_.push_back(device_->buffer(size_t(shape_numel(d.shape)) * 4));
        candidates_ = device_->buffer(size_t(std::max<int64_t>(candidates, 1)) * 8 * 4);
        order_ = device_->buffer(size_t(work) * 4);
        y_ = device_->buffer(size_t(1 + rows * 6) * 4);
    }

    std::shared_ptr<Device> device_;
    std::vector<std::unique_ptr<Buffer>> inputs_;
    std::unique_ptr<Buffer> candidates_, order_, y_;
    std::vector<Dispatch> steps_;
};

class YoloKernel final : public DetectionKernel {
public:
    YoloKernel(std::shared_ptr<Device> device, const YoloPlan& plan, const std::vector<TensorDesc>& in)
        : DetectionKernel(std::move(device))
    {
        int64_t count = 0;
        for (const TensorDesc& d : in) count += plan.num_box * d.shape[1] * d.shape[2];
        allocate(in, count, count * 3 + 2, count);
        int64_t first = 0;
        for (size_t k = 0; k < in.size(); ++k) {
            PushGrid g{};
            g.h = int32_t(in[k].shape[1]), g.w = int32_t(in[k].shape[2]);
            g.num_class = plan.num_class, g.num_box = plan.num_box, g.first = int32_t(first);
            g.softmax = g.corner_area = plan.v2 ? 1 : 0;
            g.size_w = plan.grids[k].size_w, g.size_h = plan.grids[k].size_h, g.threshold = plan.confidence_threshold;
            std::copy(plan.grids[k].anchors.begin(), plan.grids[k].anchors.end(), g.anchors);
            const uint64_t cells = uint64_t(plan.num_box) * uint64_t(g.h * g.w);
            steps_.push_back(Dispatch{"yolo_candidates", {inputs_[k].get(), candidates_.get()}, bytes_of(g), cells, 64});
            first += int64_t(cells);
        }
        const PushSelect s{int32_t(count), 1, -1, 1, plan.v2 ? 1 : 0, 1, plan.nms_threshold, 1.f};
        steps_.push_back(Dispatch{"detect_select", {candidates_.get(), order_.get(), y_.get()}, bytes_of(s), 1, 1});
    }

};

class SsdKernel final : public DetectionKernel {
public:
    SsdKernel(std::shared_ptr<Device> device, const SsdPlan& plan, const std::vector<TensorDesc>& in)
        : DetectionKernel(std::move(device))
    {
        const int64_t np = plan.num_prior, classes = plan.num_class - 1, count = classes * np;
        allocate(in, count, std::max(classes * (3 * np + 2), 3 * count + 2), count);
        selected_ = device_->buffer(size_t(std::max<int64_t>(count, 1)) * 8 * 4);
        PushSsd d{int32_t(np), int32_t(plan.num_class), plan.mxnet ? 1 : 0, plan.mxnet ? 0 : 1, plan.background_cut,
                  plan.confidence_threshold, {}};
        std::copy(plan.variances, plan.variances + 4, d.variances);
        steps_.push_back(Dispatch{"ssd_candidates",
                                  {inputs_[0].get(), inputs_[1].get(), inputs_[2].get(), candidates_.get()},
                                  bytes_of(d), uint64_t(count), 64});
        // Per class: sort, nms_top_k, NMS; then every class's boxes sorted and cut to keep_top_k.
        const PushSelect per_class{int32_t(np), int32_t(classes), plan.nms_top_k, 1, 1, 0, plan.nms_threshold, 0.f};
        steps_.push_back(Dispatch{"detect_select", {candidates_.get(), order_.get(), selected_.get()},
                                  bytes_of(per_class), uint64_t(classes), 1});
        const PushSelect merged{int32_t(count), 1, plan.keep_top_k, 0, 1, 1, plan.nms_threshold, 0.f};
        steps_.push_back(Dispatch{"detect_select", {selected_.get(), order_.get(), y_.get()}, bytes_of(merged), 1, 1});
    }

private:
    std::unique_ptr<Buffer> selected_;
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

std::unique_ptr<DeviceKernel> make_ssd_detection_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                        const std::vector<TensorDesc>& in,
                                                        const std::vector<TensorDesc>& out)
{
    if (in.size() != 3 || out.size() != 1) return nullptr;
    for (const TensorDesc& d : in)
        if (d.dtype != DType::F32) return nullptr;
    SsdPlan plan;
    if (!ssd_plan(*l.op, in, plan) || plan.num_class < 2) return nullptr;
    const int64_t count = (plan.num_class - 1) * plan.num_prior;
    if (count >= (int64_t{1} << 24) || 3 * count + 2 * plan.num_class >= (int64_t{1} << 31)) return nullptr;
    return std::make_unique<SsdKernel>(device, plan, in);
}

} // namespace kestrel::vulkan
