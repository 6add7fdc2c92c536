// Interp: resizing, in ncnn's form or ONNX's Resize (20=1). Both build a
// ResamplePlan (per-axis tap tables, taps.h) when the shapes are planned and
// run it with the one engine (resample_plan.h).
//
// Shared: 0=resize_type (1 nearest, 2 bilinear/linear, 3 bicubic/cubic; 0,
// which ncnn accepts but never implements, is an error).
//
// Ours, in ncnn's form: 0=4 resamples with a filter kernel of TensorFlow's
// list (kestrel/image.h, the image functions' resampler): 7=filter (0
// nearest, 1 bilinear, 2 bicubic, 3 lanczos3, 4 lanczos5, 5 gaussian,
// 6 mitchellcubic, 7 area) 8=antialias (0) 10=cubic_a (-0.5)
// 11=exclude_outside (1); half-pixel centers, align_corner refused.
//
// ncnn's form: 1=height_scale (1) 2=width_scale (1) 3=output_height
// 4=output_width 5=dynamic_target_size (output size = w,h of input 1)
// 6=align_corner 9=size_expr (list "w" or "w,h" in ncnn's expression
// language; the blobs it references are inputs, so it may make the layer
// multi-input). Output size: size_expr, else input 1's (w, h) with
// dynamic_target_size, else output_width/height, else (when either is 0)
// int(w * width_scale), int(h * height_scale). Input (c, h, w) resizes both
// axes, w first then h (ncnn's order of arithmetic); (h, w) resizes only w; a
// 1-D input of n values becomes (n, outh, outw), channel q filled with value q
// (ncnn's "flattened blob" case, with w = h = 1 for the scales). Rank 4 is
// refused (ncnn ignores d). Nearest scales by 1/scale when the size came from
// the scale and by w/outw otherwise. Differences from ncnn: with
// dynamic_target_size ncnn's nearest uses 1/scale (usually 1, so it copies the
// top-left part of the input) while we use w/outw; align_corner with an output
// size of 1 samples position 0 (ncnn divides by zero).
//
// ONNX's form (20=1), inputs X, target[, roi]: 21=coordinate transform
// (0 half_pixel, 1 pytorch_half_pixel, 2 align_corners, 3 asymmetric,
// 4 tf_half_pixel_for_nn, 5 tf_crop_and_resize) 22=nearest mode
// (0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil) 23=cubic_coeff_a
// (-0.75) 24=exclude_outside 25=target kind (0: per-axis float scales, 1:
// int64 sizes) 26=extrapolation_value (tf_crop_and_resize outside the roi)
// 27=dynamic (a target known only at run time; the output is shaped then).
// tf_crop_and_resize takes input 2, the roi: per axis starts then ends, as
// fractions of (len - 1); it only moves coordinates, so it may be a run-time
// value. Axes are resized outermost first; an axis kept as it is is skipped.
#include <algorithm>
#include <cmath>

#include "core/dtype_dispatch.h"
#include "ops/common/expression.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"
#include "ops/resample/interp_plan.h"
#include "ops/resample/taps.h"

namespace kestrel {

namespace {

class Interp : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        onnx_ = onnx_form(pd, "Resize");
        type_ = pd.get_int(0, onnx_ ? kResizeNearest : 0);
        check(type_ >= kResizeNearest && type_ <= (onnx_ ? kResizeCubic : kResizeFilter),
              "resize_type (param 0) must be 1 (nearest), 2 (bilinear), 3 (bicubic)", onnx_ ? "" : " or 4 (a filter)",
              ", got ", type_);
        if (onnx_) load_onnx(pd);
        else load_ncnn(pd);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_output_count(out, 1);
        if (onnx_) infer_onnx(in, out);
        else infer_ncnn(in, out);
    }

    bool dynamic_output_shape() const override { return onnx_ && dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override
    {
        return !onnx_ || nd::values_known(in, 1, 2);
    }

    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        auto plan = std::make_unique<ResamplePlan>();
        if (!planned(in, *plan)) return nullptr;
        plan->request_scratch(sampled_shape(in[0].shape), ctx);
        return plan;
    }

    // The plan for these inputs; false when an ONNX target is known only at run time.
    bool planned(const std::vector<TensorDesc>& in, ResamplePlan& plan) const
    {
        if (!onnx_) {
            std::vector<Shape> shapes;
            for (const auto& d : in) shapes.push_back(d.shape);
            plan = ncnn_plan(shapes);
            return true;
        }
        const bool crop = onnx_rule_.coord == kTfCropAndResize;
        if (!in[1].value.defined() || (crop && !in[2].value.defined())) return false;
        plan = onnx_plan(in[0].shape, in[1].value, crop ? &in[2].value : nullptr);
        return true;
    }

    Shape sampled_shape(const Shape& s) const { return !onnx_ && s.size() == 1 ? Shape{s[0], 1, 1} : s; }
    float fill() const { return extrapolation_; }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        ResamplePlan local;
        const ResamplePlan* plan = static_cast<const ResamplePlan*>(ctx.state());
        if (plan == nullptr) {
            local = onnx_plan(in[0].shape(), in[1], onnx_rule_.coord == kTfCropAndResize ? &in[2] : nullptr);
            plan = &local;
        }
        if (out[0].shape() != plan->out_shape) out[0] = Tensor(plan->out_shape, DType::F32);
        Tensor result = out[0].reshaped(sampled_shape(plan->out_shape));
        plan->run(in[0].reshaped(sampled_shape(in[0].shape())), result, extrapolation_, ctx);
    }

private:
    // ---- ncnn's form ----
    void load_ncnn(const ParamDict& pd)
    {
        height_scale_ = pd.get_float(1, 1.f);
        width_scale_ = pd.get_float(2, 1.f);
        check(std::isfinite(height_scale_) && std::isfinite(width_scale_) && height_scale_ > 0.f && width_scale_ > 0.f,
              "height_scale/width_scale (params 1, 2) must be finite and > 0, got ", height_scale_, ", ", width_scale_);
        output_height_ = pd.get_int(3, 0);
        output_width_ = pd.get_int(4, 0);
        check(output_height_ >= 0 && output_width_ >= 0, "output_height/width (params 3, 4) must be >= 0, got ",
              output_height_, ", ", output_width_);
        const int dyn = pd.get_int(5, 0);
        check(dyn == 0 || dyn == 1, "dynamic_target_size (param 5) must be 0 or 1, got ", dyn);
        dynamic_ = dyn == 1;
        const int ac = pd.get_int(6, 0);
        check(ac == 0 || ac == 1, "align_corner (param 6) must be 0 or 1, got ", ac);
        ncnn_rule_ = NcnnTapRule{type_, ac == 1};
        if (type_ == kResizeFilter) load_filter(pd, ac == 1);
        const std::string text = pd.get_string(9, "");
        has_expr_ = !text.empty();
        if (has_expr_) expr_ = Expression::parse(text);
        inputs_ = std::max<size_t>(dynamic_ ? 2 : 1, has_expr_ ? static_cast<size_t>(expr_.blob_count()) : 1);
    }

    void load_filter(const ParamDict& pd, bool align_corner)
    {
        const int filter = pd.get_int(7, static_cast<int>(image::Filter::Bilinear));
        check(filter >= 0 && filter <= static_cast<int>(image::Filter::Area), "filter (param 7) must be 0-7, got ",
              filter);
        check(!align_corner, "align_corner (param 6) does not apply to a filter (resize_type 4)");
        filter_rule_.filter = static_cast<image::Filter>(filter);
        filter_rule_.antialias = pd.get_int(8, 0) != 0;
        filter_rule_.cubic_a = pd.get_float(10, -0.5f);
        check(std::isfinite(filter_rule_.cubic_a), "cubic_a (param 10) must be finite");
        filter_rule_.exclude_outside = pd.get_int(11, 1) != 0;
    }

    // One axis's taps by ncnn's rule or, with resize_type 4, by the filter's.
    AxisTaps ncnn_form_taps(const NcnnTapRule& rule, size_t axis, int64_t len, int64_t out_len, float scale) const
    {
        if (rule.type == kResizeFilter) return filter_axis_taps(filter_rule_, axis, len, out_len);
        return ncnn_axis_taps(rule, axis, len, out_len, scale);
    }

    void infer_ncnn(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const
    {
        if (has_expr_)
            expect_expression_inputs(in, inputs_);
        else
            expect_input_count(in, inputs_, inputs_);
        expect_f32(in[0]);
        std::vector<Shape> shapes;
        for (const auto& d : in) shapes.push_back(d.shape);
        out[0] = TensorDesc(ncnn_size(shapes).out, DType::F32);
    }

    struct NcnnSize {
        int64_t outw = 0, outh = 0;
        Shape out;
    };

    NcnnSize ncnn_size(const std::vector<Shape>& shapes) const
    {
        const Shape& s = shapes[0];
        const NcnnDims n = ncnn_dims(s);
        check(n.dims <= 3, "expects a rank 1-3 input, got ", shape_str(s));
        const int64_t w = n.dims == 1 ? 1 : n.w, h = n.dims == 1 ? 1 : n.h;
        NcnnSize z;
        if (has_expr_) {
            const std::vector<int> list = expr_.eval_list(shapes);
            check(list.size() == 1 || list.size() == 2, "size_expr (param 9) '", expr_.text(), "' gives ", list.size(),
                  " values, expected 1 (w) or 2 (w,h)");
            z.outw = list[0];
            z.outh = list.size() == 2 ? list[1] : n.h;
        } else if (dynamic_) {
            const NcnnDims r = ncnn_dims(shapes[1]);
            z.outw = r.w;
            z.outh = r.h;
        } else {
            z.outw = output_width_;
            z.outh = output_height_;
            if (z.outw == 0 || z.outh == 0) {
                const float fw = static_cast<float>(w) * width_scale_, fh = static_cast<float>(h) * height_scale_;
                check(fw < 2147483648.f && fh < 2147483648.f, "scaled output size (w ", fw, ", h ", fh, ") is too large");
                z.outw = static_cast<int64_t>(fw);
                z.outh = static_cast<int64_t>(fh);
            }
        }
        const bool uses_h = n.dims != 2;
        check(z.outw > 0 && (!uses_h || z.outh > 0), "output size (w ", z.outw, uses_h ? ", h " : "",
              uses_h ? std::to_string(z.outh) : std::string(), ") must be positive");
        if (n.dims == 1) z.out = {n.w, z.outh, z.outw};
        else if (n.dims == 2) z.out = {n.h, z.outw};
        else z.out = {n.c, z.outh, z.outw};
        return z;
    }

    // A 1-D ncnn input is resampled as (n, 1, 1): every output of channel q is
    // its one value, whatever the type.
    // w first, then h (as ncnn computes), each step kept even when it maps an
    // axis onto itself (the blend then still runs, as in ncnn) unless the whole
    // input is kept or h is a single row kept.
    ResamplePlan ncnn_plan(const std::vector<Shape>& shapes) const
    {
        const NcnnSize z = ncnn_size(shapes);
        const Shape in = sampled_shape(shapes[0]);
        ResamplePlan plan;
        plan.out_shape = z.out;
        const size_t waxis = in.size() - 1;
        const int64_t w = in[waxis], h = in.size() == 3 ? in[1] : 1;
        const int64_t outh = in.size() == 3 ? z.outh : 1;
        if (z.outw == w && outh == h) return plan;
        const bool flat = shapes[0].size() == 1;
        const NcnnTapRule rule = flat ? NcnnTapRule{kResizeNearest, false} : ncnn_rule_;
        const bool size_w = output_width_ != 0 || has_expr_ || dynamic_;
        const bool size_h = output_height_ != 0 || has_expr_ || dynamic_;
        const float ws = size_w ? static_cast<float>(w) / static_cast<float>(z.outw) : 1.f / width_scale_;
        const float hs = size_h ? static_cast<float>(h) / static_cast<float>(outh) : 1.f / height_scale_;
        plan.steps.push_back(ncnn_form_taps(rule, waxis, w, z.outw, ws));
        if (in.size() == 3 && !(h == 1 && outh == 1)) plan.steps.push_back(ncnn_form_taps(rule, 1, h, outh, hs));
        return plan;
    }

    // ---- ONNX's form ----
    void load_onnx(const ParamDict& pd)
    {
        onnx_rule_.type = type_;
        onnx_rule_.coord = pd.get_int(21, kHalfPixel);
        onnx_rule_.nearest = pd.get_int(22, 0);
        onnx_rule_.cubic_a = pd.get_float(23, -0.75f);
        onnx_rule_.exclude_outside = pd.get_int(24, 0) != 0;
        sizes_ = pd.get_int(25, 0) != 0;
        extrapolation_ = pd.get_float(26, 0.f);
        dynamic_ = pd.get_int(27, 0) != 0;
        check(onnx_rule_.coord >= kHalfPixel && onnx_rule_.coord <= kTfCropAndResize,
              "coordinate transform (param 21) must be 0..5, got ", onnx_rule_.coord);
        check(onnx_rule_.nearest >= 0 && onnx_rule_.nearest <= 3, "nearest mode (param 22) must be 0..3, got ",
              onnx_rule_.nearest);
    }

    void infer_onnx(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const
    {
        const bool crop = onnx_rule_.coord == kTfCropAndResize;
        expect_input_count(in, crop ? 3 : 2, crop ? 3 : 2);
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
              "27=dynamic=1 to accept values known only at run time)");
        std::vector<double> scales;
        out[0] = TensorDesc(onnx_output_shape(in[0].shape, in[1].value, scales), DType::F32);
    }

    const char* target_name() const { return sizes_ ? "sizes" : "scales"; }

    ResamplePlan onnx_plan(const Shape& in_shape, const Tensor& target, const Tensor* roi_input) const
    {
        ResamplePlan plan;
        std::vector<double> scales;
        plan.out_shape = onnx_output_shape(in_shape, target, scales);
        const std::vector<double> roi = roi_input ? roi_values(*roi_input) : std::vector<double>();
        const size_t rank = plan.out_shape.size();
        for (size_t axis = 0; axis < rank; ++axis) {
            const int64_t in_len = in_shape[axis], out_len = plan.out_shape[axis];
            OnnxAxis a{in_len, out_len, scales[axis],
                       sizes_ ? static_cast<double>(out_len) : static_cast<double>(in_len) * scales[axis]};
            if (!roi.empty()) {
                a.roi_start = roi[axis];
                a.roi_end = roi[axis + rank];
            }
            if (in_len == out_len && a.scale == 1.0 && roi.empty()) continue;
            plan.steps.push_back(onnx_axis_taps(onnx_rule_, axis, a));
        }
        return plan;
    }

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

    Shape onnx_output_shape(const Shape& in, const Tensor& target, std::vector<double>& scales) const
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
                    scales[i] = static_cast<double>(static_cast<float>(v) / static_cast<float>(in[i]));
                } else {
                    check(v > 0 && v < 1e6, "scales must be > 0, got ", v);
                    scales[i] = static_cast<float>(v);
                    out[i] = static_cast<int64_t>(std::floor(static_cast<double>(in[i]) * static_cast<float>(v)));
                }
            }
        });
        return out;
    }

    bool onnx_ = false;
    int type_ = 0;
    // ncnn's form
    NcnnTapRule ncnn_rule_;
    image::ResizeOptions filter_rule_; // resize_type 4
    float height_scale_ = 1.f, width_scale_ = 1.f;
    int output_height_ = 0, output_width_ = 0;
    bool has_expr_ = false;
    Expression expr_;
    size_t inputs_ = 1;
    // ONNX's form
    OnnxTapRule onnx_rule_;
    bool sizes_ = false;
    float extrapolation_ = 0.f;
    // both: the output size is taken from another input's shape (ncnn) or value (ONNX)
    bool dynamic_ = false;
};

} // namespace

bool interp_plan(const Op& op, const std::vector<TensorDesc>& in, ResamplePlan& plan, Shape& sampled_in, float& fill)
{
    const auto* interp = dynamic_cast<const Interp*>(&op);
    if (interp == nullptr || !interp->planned(in, plan)) return false;
    sampled_in = interp->sampled_shape(in[0].shape);
    fill = interp->fill();
    return true;
}

std::unique_ptr<Op> make_interp() { return std::make_unique<Interp>(); }

} // namespace kestrel
