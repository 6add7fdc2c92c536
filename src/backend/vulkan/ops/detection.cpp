// The detection layers (float32) on the GPU: candidates decoded in parallel
// in the CPU's order, then selected as ncnn selects them (sort, top-k, greedy
// NMS; shaders/detect_*.comp); the output's rows are read back, (n, 6).
//   YoloDetectionOutput, Yolov3DetectionOutput: every grid's candidates
//     (shaders/yolo_candidates.comp, with the score and area rules, anchors
//     and sizes the CPU layer resolves, ops/detection/yolo_plan.h), one NMS.
//   DetectionOutput: candidates per foreground class and prior
//     (shaders/ssd_candidates.comp, ops/detection/ssd_plan.h), each class
//     sorted, cut to nms_top_k and NMS'd, then all classes sorted and cut
//     to keep_top_k.
// A selection's sort and NMS are sequential walks; their state stays on the
// device between runs of bounded length (lavapipe ends loops past 65535
// iterations of an invocation), so a walk of any length takes several runs:
// NMS as many as its rows need (known when planned), the sort until the
// device says every group is sorted.
#include <cmath>
#include <cstring>

#include "backend/vulkan/gpu_kernel.h"
#include "kestrel/error.h"
#include "ops/detection/ssd_plan.h"
#include "ops/detection/yolo_plan.h"

namespace kestrel::vulkan {

namespace {

constexpr int kMaxBoxes = 8;           // anchors the push constants hold
constexpr int kStateInts = 10;         // shaders/detect_common.glsl: STATE_INTS
constexpr int kStateN = 0, kStatePhase = 1, kSorted = 5;
constexpr int kMaxMaskWords = 2048;    // shaders/detect_nms.comp: MAX_WORDS
constexpr int64_t kMaxMaskBytes = int64_t{1} << 29;
constexpr int kStepsPerRun = 60000;    // below kMaxLoopIterations, with room for the shaders' other loops

struct PushGrid {
    int32_t h, w, num_class, num_box, first, softmax, corner_area;
    float size_w, size_h, threshold;
    float anchors[2 * kMaxBoxes];
};
static_assert(sizeof(PushGrid) <= 128, "push constants stay within Vulkan's guaranteed 128 bytes");

struct PushSsd {
    int32_t num_prior, num_class, mxnet, prior_variances;
    float background_cut, threshold;
    float variances[4];
};

struct PushGroups {
    int32_t count, groups;
};
struct PushSort {
    int32_t count, groups, top_k, budget;
};
struct PushOverlaps {
    int32_t count, groups, words, ratio;
    float threshold;
};
struct PushNms {
    int32_t count, groups, words, rows;
};
struct PushRows {
    int32_t count, groups, rows;
    float label_offset;
};

int32_t words_of(int64_t count) { return int32_t((count + 31) / 32); }

// Whether a selection of `groups` groups of `count` slots fits the shaders
// (int indices, the NMS walk's shared memory, a bounded overlap mask).
bool selection_fits(int64_t groups, int64_t count, bool nms)
{
    if (count < 1 || groups < 1 || groups * count * 8 >= (int64_t{1} << 31)) return false;
    if (groups * (3 * count + 2) >= (int64_t{1} << 31)) return false;
    return !nms || (words_of(count) <= kMaxMaskWords && groups * count * words_of(count) * 4 <= kMaxMaskBytes);
}

// ncnn's selection over `groups` groups of `count` candidate slots (8 floats
// each: xmin, ymin, xmax, ymax, score, area, label, kept): per group the kept
// candidates sorted by descending score (ncnn's order of ties), cut to
// top_k (>= 0), then with NMS the boxes no kept one overlaps past the
// threshold; written as output rows (one group) or as the next selection's
// candidates.
class Selection {
public:
    struct Nms {
        bool on = false, ratio = true;
        float threshold = 0;
    };
    Selection(Device& device, const Buffer* candidates, int64_t groups, int64_t count, int top_k, Nms nms)
        : device_(device), candidates_(candidates), groups_(int32_t(groups)), count_(int32_t(count)), top_k_(top_k),
          nms_(nms), order_(device.buffer(size_t(groups * (3 * count + 2)) * 4)),
          state_(device.buffer(size_t(groups * kStateInts) * 4))
    {
        if (nms_.on) {
            mask_ = device.buffer(size_t(groups * count * words_of(count)) * 4);
            removed_ = device.buffer(size_t(groups * words_of(count)) * 4);
        }
        more_sorting_.assign(8, sort_run());
    }

    // The candidates compacted and sorted for as many runs as a sort usually
    // takes; sort() finishes it.
    void start(std::vector<Dispatch>& steps) const
    {
        steps.push_back(dispatch_of("detect_compact", {candidates_, order_.get(), state_.get()},
                                    PushGroups{count_, groups_}, uint64_t(groups_) * 64, 64));
        const double steps_needed = 3.0 * count_ * std::log2(count_ + 2.0) + 4.0 * count_;
        for (int64_t r = 0; r < int64_t(std::ceil(steps_needed / kStepsPerRun)); ++r) steps.push_back(sort_run());
    }

    // Runs the sort until every group is sorted; the device's ms (-1 when it has no timestamps).
    double sort()
    {
        double ms = 0;
        // A quicksort takes at most count^2 steps or so; past that the shader is broken.
        const double most_runs = 4.0 * double(count_) * count_ / kStepsPerRun + 16;
        for (int runs = 0; !sorted(); ++runs) {
            check(runs < most_runs, "internal: the GPU sort of ", count_, " detection candidates did not finish");
            const double part = device_.run(more_sorting_);
            ms = part < 0 || ms < 0 ? -1 : ms + part;
        }
        return ms;
    }

    // NMS (with one) and the selected candidates written to y: rows when `rows`, else slots.
    void finish(const Buffer* y, bool rows, float label_offset, std::vector<Dispatch>& steps) const
    {
        if (nms_.on) {
            const int32_t words = words_of(count_);
            steps.push_back(dispatch_of("detect_overlaps", {candidates_, order_.get(), state_.get(), mask_.get()},
                                        PushOverlaps{count_, groups_, words, nms_.ratio ? 1 : 0, nms_.threshold},
                                        uint64_t(groups_) * uint64_t(count_) * uint64_t(words), 64));
            // A row costs a step and its share of the removed words; loading and storing them, two shares.
            const int32_t share = (words + 63) / 64, rows_per_run = std::max(1, kStepsPerRun / (1 + share) - 2);
            for (int64_t first = 0; first < count_; first += rows_per_run)
                steps.push_back(dispatch_of("detect_nms", {order_.get(), state_.get(), mask_.get(), removed_.get()},
                                            PushNms{count_, groups_, words, rows_per_run}, uint64_t(groups_) * 64, 64));
        }
        steps.push_back(dispatch_of("detect_rows", {candidates_, order_.get(), state_.get(), y},
                                    PushRows{count_, groups_, rows ? 1 : 0, label_offset},
                                    uint64_t(groups_) * uint64_t(count_), 64));
    }

    // The candidates group 0 selected (after finish's steps ran).
    int64_t selected() const { return static_cast<const int32_t*>(state_->data())[kStateN]; }

private:
    Dispatch sort_run() const
    {
        return dispatch_of("detect_sort", {candidates_, order_.get(), state_.get()},
                           PushSort{count_, groups_, top_k_, kStepsPerRun}, uint64_t(groups_), 64);
    }
    bool sorted() const
    {
        const int32_t* s = static_cast<const int32_t*>(state_->data());
        for (int32_t g = 0; g < groups_; ++g)
            if (s[g * kStateInts + kStatePhase] != kSorted) return false;
        return true;
    }

    Device& device_;
    const Buffer* candidates_;
    int32_t groups_, count_, top_k_;
    Nms nms_;
    std::unique_ptr<Buffer> order_, state_, mask_, removed_;
    std::vector<Dispatch> more_sorting_; // a submission of sort runs, for sorts longer than usual
};

// Inputs copied in (unless on the device already), candidates decoded, one or
// two selections, the (n, 6) rows read back (the row count is known only then).
class DetectionKernel final : public GpuKernel {
public:
    DetectionKernel(std::shared_ptr<Device> device, const std::vector<TensorDesc>& in, int64_t candidates)
        : device_(std::move(device)), candidates_(device_->buffer(size_t(candidates) * 8 * 4)),
          rows_(device_->buffer(size_t(candidates) * 6 * 4))
    {
        for (const TensorDesc& d : in) {
            inputs_.push_back(device_->buffer(size_t(shape_numel(d.shape)) * 4));
            input_buffer(inputs_.size() - 1, inputs_.back().get());
        }
    }
    std::vector<const Buffer*> inputs() const
    {
        std::vector<const Buffer*> v;
        for (const auto& b : inputs_) v.push_back(b.get());
        return v;
    }
    const Buffer* candidates() const { return candidates_.get(); }
    // The buffer between two selections: as many slots as the candidates.
    const Buffer* between()
    {
        if (!between_) between_ = device_->buffer(candidates_->bytes());
        return between_.get();
    }
    void decode(Dispatch d) { decode_.push_back(std::move(d)); }
    Selection& select(const Buffer* from, int64_t groups, int64_t count, int top_k, Selection::Nms nms)
    {
        selections_.push_back(std::make_unique<Selection>(*device_, from, groups, count, top_k, nms));
        return *selections_.back();
    }
    void set_label_offset(float offset) { label_offset_ = offset; }

    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override
    {
        upload_inputs(in);
        if (submissions_.empty()) plan_submissions();
        double ms = 0;
        const auto add = [&ms](double part) { ms = part < 0 || ms < 0 ? -1 : ms + part; };
        for (size_t k = 0; k < selections_.size(); ++k) {
            add(device_->run(submissions_[k]));
            add(selections_[k]->sort());
        }
        add(device_->run(submissions_.back()));
        last_ms_ = ms;
        const int64_t n = selections_.back()->selected();
        out[0] = Tensor({n, 6}, DType::F32);
        if (n) std::memcpy(out[0].raw(), rows_->data(), size_t(n) * 6 * 4);
        transfer_bytes_ += n * 6 * 4;
    }

private:
    // A run's submissions, made once: the decoding and the first selection's
    // start; then, each after a selection's sort, its finish (the last one's
    // into the rows) and the next one's start.
    void plan_submissions()
    {
        std::vector<Dispatch> steps = decode_;
        for (size_t k = 0; k < selections_.size(); ++k) {
            selections_[k]->start(steps);
            submissions_.push_back(std::move(steps));
            steps.clear();
            const bool last = k + 1 == selections_.size();
            selections_[k]->finish(last ? rows_.get() : between_.get(), last, label_offset_, steps);
        }
        submissions_.push_back(std::move(steps));
    }

    std::shared_ptr<Device> device_;
    std::vector<std::unique_ptr<Buffer>> inputs_;
    std::unique_ptr<Buffer> candidates_, rows_, between_;
    std::vector<Dispatch> decode_;
    std::vector<std::unique_ptr<Selection>> selections_;
    std::vector<std::vector<Dispatch>> submissions_; // plan_submissions()
    float label_offset_ = 0;
};

std::unique_ptr<DeviceKernel> yolo_kernel(const std::shared_ptr<Device>& device, const YoloPlan& plan,
                                          const std::vector<TensorDesc>& in, int64_t count)
{
    auto kernel = std::make_unique<DetectionKernel>(device, in, count);
    int64_t first = 0;
    for (size_t k = 0; k < in.size(); ++k) {
        PushGrid g{};
        g.h = int32_t(in[k].shape[1]), g.w = int32_t(in[k].shape[2]);
        g.num_class = plan.num_class, g.num_box = plan.num_box, g.first = int32_t(first);
        g.softmax = g.corner_area = plan.v2 ? 1 : 0;
        g.size_w = plan.grids[k].size_w, g.size_h = plan.grids[k].size_h, g.threshold = plan.confidence_threshold;
        std::copy(plan.grids[k].anchors.begin(), plan.grids[k].anchors.end(), g.anchors);
        const uint64_t cells = uint64_t(plan.num_box) * uint64_t(g.h * g.w);
        kernel->decode(dispatch_of("yolo_candidates", {kernel->inputs()[k], kernel->candidates()}, g, cells, 64));
        first += int64_t(cells);
    }
    // v2 tests intersection / union, v3 intersection against threshold * union.
    kernel->select(kernel->candidates(), 1, count, -1, Selection::Nms{true, plan.v2, plan.nms_threshold});
    kernel->set_label_offset(1.f);
    return kernel;
}

std::unique_ptr<DeviceKernel> ssd_kernel(const std::shared_ptr<Device>& device, const SsdPlan& plan,
                                         const std::vector<TensorDesc>& in)
{
    const int64_t np = plan.num_prior, classes = plan.num_class - 1;
    auto kernel = std::make_unique<DetectionKernel>(device, in, classes * np);
    PushSsd d{int32_t(np), int32_t(plan.num_class), plan.mxnet ? 1 : 0, plan.mxnet ? 0 : 1, plan.background_cut,
              plan.confidence_threshold, {}};
    std::copy(plan.variances, plan.variances + 4, d.variances);
    std::vector<const Buffer*> buffers = kernel->inputs();
    buffers.push_back(kernel->candidates());
    kernel->decode(dispatch_of("ssd_candidates", buffers, d, uint64_t(classes * np), 64));
    // Per class: sort, nms_top_k, NMS; then every class's boxes sorted and cut to keep_top_k.
    kernel->select(kernel->candidates(), classes, np, plan.nms_top_k, Selection::Nms{true, true, plan.nms_threshold});
    kernel->select(kernel->between(), 1, classes * np, plan.keep_top_k, Selection::Nms{});
    return kernel;
}

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
    if (!selection_fits(1, count, true)) return nullptr;
    return yolo_kernel(device, plan, in, count);
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
    const int64_t classes = plan.num_class - 1;
    if (!selection_fits(classes, plan.num_prior, true) || !selection_fits(1, classes * plan.num_prior, false))
        return nullptr;
    return ssd_kernel(device, plan, in);
}

} // namespace kestrel::vulkan
