// Resize (ONNX semantics, our layer). Inputs: X, target. Params:
//   0=mode (0 nearest, 1 linear, 2 cubic)
//   1=coordinate transform (0 half_pixel, 1 pytorch_half_pixel, 2 align_corners,
//     3 asymmetric, 4 tf_half_pixel_for_nn, 5 tf_crop_and_resize)
//   2=nearest mode (0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil)
//   3=cubic_coeff_a (-0.75)   4=exclude_outside (0)
//   5=target kind: 0 = input 1 holds per-axis scales (float), 1 = sizes (int64)
//   6=extrapolation_value (0): tf_crop_and_resize's value outside the roi
//   20=dynamic (0): 1 accepts a target known only at run time (the output
//     shape is then computed in forward(), see nd_common.cpp)
// tf_crop_and_resize takes input 2, the roi: per axis starts then ends, as
// fractions of (len - 1); it only moves coordinates, so it may be a run-time value.
// Without 20=dynamic the target must be known while planning (constant or
// computed from shapes).
// One mechanism for every mode: each resized axis gets a table of taps
// (source index, weight) per output index, applied axis by axis (separable),
// with source indices clamped to the edge as ONNX's reference does.
#include <cmath>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum Mode { kNearest = 0, kLinear = 1, kCubic = 2 };
enum Coord {
    kHalfPixel = 0,
    kPytorchHalfPixel = 1,
    kAlignCorners = 2,
    kAsymmetric = 3,
    kTfHalfPixelForNn = 4,
    kTfCropAndResize = 5
};

struct Tap {
    int64_t index;
    float weight;
};

// One resized axis: lengths, scale, and the roi (tf_crop_and_resize only).
// `resized` is the unrounded output length (in_len * scale for scales, as
// ONNX's align_corners uses it).
struct AxisResize {
    int64_t in_len, out_len;
    double scale, resized, roi_start = 0, roi_end = 1;
};

class Resize : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        mode_ = pd.get_int(0, kNearest);
        coord_ = pd.get_int(1, kHalfPixel);
        nearest_ = pd.get_int(2, 0);
        cubic_a_ = pd.get_float(3, -0.75f);
        exclude_outside_ = pd.get_int(4, 0) != 0;
        sizes_ = pd.get_int(5, 0) != 0;
        extrapolation_ = pd.get_float(6, 0.f);
        dynamic_ = pd.get_int(20, 0) != 0;
        check(mode_ >= kNearest && mode_ <= kCubic, "mode (param 0) must be 0..2, got ", mode_);
        check(coord_ >= kHalfPixel && coord_ <= kTfCropAndResize, "coordinate transform (param 1) must be 0..5, got ", coord_);
        check(nearest_ >= 0 && nearest_ <= 3, "nearest mode (param 2) must be 0..3, got ", nearest_);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const bool crop = coord_ == kTfCropAndResize;
        expect_input_count(in, crop ? 3 : 2, crop ? 3 : 2);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const size_t rank = in[0].shape.size();
        check(in[1].shape == Shape{static_cast<int64_t>(rank)}, "the ", target_name(), " input must have shape (",
              rank, ") for a rank-", rank, " input, got ", shape_str(in[1].shape));
        if (crop)
            check(in[2].shape == Shape{static_cast<int64_t>(2 * rank)}, "the roi input must have shape (", 2 * rank,
                  ") for a rank-", rank, " input, got ", shape_str(in[2].shape));
        if (!in[1].value.defined() && dynamic_) {
            out[0] = TensorDesc(in[0].shape, DType::F32); // placeholder: forward() gives the true shape
            return;
        }
        check(in[1].value.defined(), "the ", target_name(), " input must be known while planning (convert with ",
              "20=dynamic=1 to accept values known only at run time)");
        std::vector<double> scales;
        out[0] = TensorDesc(output_shape(in[0].shape, in[1].value, scales), DType::F32);
    }

    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1, 2); }

    // The per-axis tap tables and intermediate buffers for the planned shapes
    // (when the target, and the roi of tf_crop_and_resize, are known while
    // planning; otherwise forward() works them out itself).
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        const bool crop = coord_ == kTfCropAndResize;
        if (!in[1].value.defined() || (crop && !in[2].value.defined())) return nullptr;
        auto plan = std::make_unique<ResizePlan>(make_plan(in[0].shape, in[1].value, crop ? &in[2].value : nullptr));
        int64_t largest = 0;
        for (size_t i = 0; i + 1 < plan->steps.size(); ++i) largest = std::max(largest, shape_numel(plan->steps[i].shape));
        if (largest > 0)
            for (int& buffer : plan->intermediate) buffer = ctx.request_scratch(largest * 4);
        return plan;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        ResizePlan local;
        const ResizePlan* plan = static_cast<const ResizePlan*>(ctx.state());
        if (plan == nullptr) {
            local = make_plan(in[0].shape(), in[1], coord_ == kTfCropAndResize ? &in[2] : nullptr);
            plan = &local;
        }
        if (out[0].shape() != plan->out_shape) out[0] = Tensor(plan->out_shape, DType::F32);
        // Axis by axis, through two intermediate buffers in turn, the last axis into the output.
        Tensor current = in[0];
        for (size_t i = 0; i < plan->steps.size(); ++i) {
            const AxisStep& step = plan->steps[i];
            const int buffer = plan->intermediate[i % 2];
            Tensor next = i + 1 == plan->steps.size() ? out[0]
                          : buffer >= 0               ? Tensor::wrap(ctx.scratch(buffer), step.shape)
                                                      : Tensor(step.shape, DType::F32);
            resize_axis(current, next, step.axis, step.taps, extrapolation_, ctx);
            current = next;
        }
        if (current.raw() != out[0].raw())
            std::copy_n(current.data<float>(), current.numel(), out[0].data<float>());
    }

private:
    // One resized axis: the shape after it, and its taps per output index.
    struct AxisStep {
        size_t axis = 0;
        Shape shape;
        std::vector<std::vector<Tap>> taps;
    };
    struct ResizePlan : OpState {
        Shape out_shape;
        std::vector<AxisStep> steps;
        int intermediate[2] = {-1, -1}; // scratch buffers (-1: allocated by forward)
    };

    ResizePlan make_plan(const Shape& in_shape, const Tensor& target, const Tensor* roi_input) const
    {
        ResizePlan plan;
        std::vector<double> scales;
        plan.out_shape = output_shape(in_shape, target, scales);
        const std::vector<double> roi = roi_input ? roi_values(*roi_input) : std::vector<double>();
        Shape current = in_shape;
        for (size_t axis = 0; axis < plan.out_shape.size(); ++axis) {
            const int64_t in_len = current[axis];
            AxisResize a{in_len, plan.out_shape[axis], scales[axis],
                         sizes_ ? static_cast<double>(plan.out_shape[axis]) : static_cast<double>(in_len) * scales[axis]};
            if (!roi.empty()) {
                a.roi_start = roi[axis];
                a.roi_end = roi[axis + plan.out_shape.size()];
            }
            if (a.in_len == a.out_len && a.scale == 1.0 && roi.empty()) continue;
            current[axis] = a.out_len;
            plan.steps.push_back(AxisStep{axis, current, taps(a)});
        }
        return plan;
    }

    const char* target_name() const { return sizes_ ? "sizes" : "scales"; }

    static std::vector<double> roi_values(const Tensor& roi)
    {
        std::vector<double> v(static_cast<size_t>(roi.numel()));
        visit_dtype(roi.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            for (size_t i = 0; i < v.size(); ++i) v[i] = to_double(roi.data<T>()[i]);
        });
        for (double r : v) check(std::isfinite(r), "roi values must be finite, got ", r);
        return v;
    }

    Shape output_shape(const Shape& in, const Tensor& target, std::vector<double>& scales) const
    {
        check(target.numel() == static_cast<int64_t>(in.size()), "has ", target.numel(),
              " target values for a rank-", in.size(), " input");
        Shape out(in.size());
        scales.assign(in.size(), 1.0);
        visit_dtype(target.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            for (size_t i = 0; i < in.size(); ++i) {
                const double v = to_double(target.data<T>()[i]);
                if (sizes_) {
                    check(v >= 1 && v < 1e9, "sizes must be >= 1, got ", v);
                    check(in[i] > 0, "cannot resize axis ", i, " of ", shape_str(in), ": it is empty");
                    out[i] = static_cast<int64_t>(v);
                    scales[i] = in[i] > 0 ? static_cast<double>(static_cast<float>(v) / static_cast<float>(in[i])) : 1.0;
                } else {
                    check(v > 0 && v < 1e6, "scales must be > 0, got ", v);
                    scales[i] = static_cast<float>(v);
                    out[i] = static_cast<int64_t>(std::floor(static_cast<double>(in[i]) * static_cast<float>(v)));
                }
            }
        });
        return out;
    }

    double source_coordinate(int64_t x, const AxisResize& a) const
    {
        const double in_span = static_cast<double>(a.in_len - 1), out_span = static_cast<double>(a.out_len - 1);
        switch (coord_) {
        case kHalfPixel: return (x + 0.5) / a.scale - 0.5;
        case kPytorchHalfPixel: return a.out_len > 1 ? (x + 0.5) / a.scale - 0.5 : 0.0;
        case kAlignCorners: return a.resized != 1.0 ? x * in_span / (a.resized - 1) : 0.0;
        case kAsymmetric: return x / a.scale;
        case kTfCropAndResize:
            return a.out_len > 1 ? a.roi_start * in_span + x * (a.roi_end - a.roi_start) * in_span / out_span
                                 : 0.5 * (a.roi_start + a.roi_end) * in_span;
        default: return (x + 0.5) / a.scale;
        }
    }

    int64_t nearest_index(double x) const
    {
        switch (nearest_) {
        case 0: return x - std::floor(x) == 0.5 ? static_cast<int64_t>(std::floor(x)) : static_cast<int64_t>(std::round(x));
        case 1: return x - std::floor(x) == 0.5 ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(std::round(x));
        case 2: return static_cast<int64_t>(std::floor(x));
        default: return static_cast<int64_t>(std::ceil(x));
        }
    }

    float cubic_weight(double d) const
    {
        const double a = cubic_a_, x = std::fabs(d);
        if (x <= 1) return static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
        if (x < 2) return static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
        return 0.f;
    }

    // Taps of every output index along one axis. No taps: the coordinate falls
    // outside the input (tf_crop_and_resize), the output is the extrapolation value.
    std::vector<std::vector<Tap>> taps(const AxisResize& a) const
    {
        const int64_t in_len = a.in_len;
        std::vector<std::vector<Tap>> table(a.out_len);
        auto clamp = [&](int64_t i) { return std::min(std::max<int64_t>(i, 0), in_len - 1); };
        for (int64_t x = 0; x < a.out_len; ++x) {
            const double src = source_coordinate(x, a);
            if (coord_ == kTfCropAndResize && (src < 0 || src > static_cast<double>(in_len - 1))) continue;
            std::vector<Tap>& t = table[x];
            if (mode_ == kNearest) {
                t.push_back({clamp(nearest_index(src)), 1.f});
                continue;
            }
            const double base = std::floor(src), frac = src - base;
            const int64_t x0 = static_cast<int64_t>(base);
            if (mode_ == kLinear) {
                t = {{x0, static_cast<float>(1 - frac)}, {x0 + 1, static_cast<float>(frac)}};
            } else {
                for (int k = -1; k <= 2; ++k) t.push_back({x0 + k, cubic_weight(frac - k)});
            }
            if (exclude_outside_) {
                float sum = 0;
                for (Tap& tap : t) {
                    if (tap.index < 0 || tap.index >= in_len) tap.weight = 0;
                    sum += tap.weight;
                }
                for (Tap& tap : t) tap.weight = sum != 0 ? tap.weight / sum : 0;
            }
            for (Tap& tap : t) tap.index = clamp(tap.index);
        }
        return table;
    }

    // A row without taps is filled with `outside` (weights of the others sum to 1,
    // so later axes interpolating it keep the value).
    static void resize_axis(const Tensor& src, Tensor& dst, size_t axis, const std::vector<std::vector<Tap>>& table,
                            float outside, const ExecContext& ctx)
    {
        int64_t outer = 1, inner = 1;
        for (size_t i = 0; i < axis; ++i) outer *= src.shape()[i];
        for (size_t i = axis + 1; i < src.shape().size(); ++i) inner *= src.shape()[i];
        const int64_t in_len = src.shape()[axis], out_len = dst.shape()[axis];
        const float* s = src.data<float>();
        float* d = dst.data<float>();
        ctx.parallel_for(outer * out_len, [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
                const int64_t o = r / out_len, x = r % out_len;
                float* drow = d + (o * out_len + x) * inner;
                std::fill(drow, drow + inner, table[x].empty() ? outside : 0.f);
                for (const Tap& tap : table[x]) {
                    const float* srow = s + (o * in_len + tap.index) * inner;
                    for (int64_t i = 0; i < inner; ++i) drow[i] += tap.weight * srow[i];
                }
            }
        });
    }

    int mode_ = kNearest, coord_ = kHalfPixel, nearest_ = 0;
    float cubic_a_ = -0.75f, extrapolation_ = 0.f;
    bool exclude_outside_ = false, sizes_ = false, dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_resize() { return std::make_unique<Resize>(); }

} // namespace kestrel
