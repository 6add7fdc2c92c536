// PriorBox (ncnn): SSD anchor boxes for every cell of a feature map.
// Params: 0 min_sizes, 1 max_sizes, 2 aspect_ratios (float arrays),
// 3-6 variances (0.1, 0.1, 0.2, 0.2), 7 flip (1), 8 clip (0),
// 9 image_width / 10 image_height (0; -233 = from input 1),
// 11 step_width / 12 step_height (-233 = image size / feature size), 13 offset (0),
// 14 step_mmdetection (0: step = ceil(image / feature)), 15 center_mmdetection
// (0: centres at offset * (step - 1) + index * step).
// Inputs: the feature map (only its w, h are used; any dtype; data never read)
// and, optionally, the image (w, h used when 9/10 are -233).
// Caffe style output: shape (2, 4 * h * w * num_prior), row 0 the boxes
// (xmin, ymin, xmax, ymax normalised by the image size), row 1 the variances.
// Per cell the priors are, for each min size: the min-size square, the
// sqrt(min*max) square when max sizes are given, then per aspect ratio the box
// (min*sqrt(ar), min/sqrt(ar)) and, with flip, its transpose.
// MXNet style (_contrib_MultiBoxPrior) when there is one input, 9 and 10 are
// -233 and there are no max sizes: output (4 * h * w * num_prior,) of boxes
// only, num_prior = sizes - 1 + ratios, steps default to 1/w and 1/h, the first
// ratio is taken as 1.
#include <cmath>

#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

constexpr int kFromInput = -233;

class PriorBox : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        min_sizes_ = pd.get_floats(0);
        max_sizes_ = pd.get_floats(1);
        aspect_ratios_ = pd.get_floats(2);
        variances_[0] = pd.get_float(3, 0.1f);
        variances_[1] = pd.get_float(4, 0.1f);
        variances_[2] = pd.get_float(5, 0.2f);
        variances_[3] = pd.get_float(6, 0.2f);
        flip_ = pd.get_int(7, 1) != 0;
        clip_ = pd.get_int(8, 0) != 0;
        image_width_ = pd.get_int(9, 0);
        image_height_ = pd.get_int(10, 0);
        step_width_ = pd.get_float(11, -233.f);
        step_height_ = pd.get_float(12, -233.f);
        offset_ = pd.get_float(13, 0.f);
        step_mmdetection_ = pd.get_int(14, 0) != 0;
        center_mmdetection_ = pd.get_int(15, 0) != 0;

        check(!min_sizes_.empty(), "needs at least one min size (param 0)");
        for (float s : min_sizes_) check(s > 0.f, "min sizes (param 0) must be > 0, got ", s);
        check(max_sizes_.empty() || max_sizes_.size() == min_sizes_.size(), "max sizes (param 1) must be empty or have one per min size (",
              min_sizes_.size(), "), got ", max_sizes_.size());
        for (float s : max_sizes_) check(s > 0.f, "max sizes (param 1) must be > 0, got ", s);
        for (float r : aspect_ratios_) check(r > 0.f, "aspect ratios (param 2) must be > 0, got ", r);
        check(image_width_ > 0 || image_width_ == kFromInput,
              "image_width (param 9) must be > 0 or -233 (from input 1), got ", image_width_);
        check(image_height_ > 0 || image_height_ == kFromInput,
              "image_height (param 10) must be > 0 or -233 (from input 1), got ", image_height_);
        check(step_width_ > 0.f || step_width_ == -233.f, "step_width (param 11) must be > 0 or -233, got ", step_width_);
        check(step_height_ > 0.f || step_height_ == -233.f, "step_height (param 12) must be > 0 or -233, got ",
              step_height_);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 2);
        expect_output_count(out, 1);
        const NcnnDims f = ncnn_dims(in[0].shape);
        check(f.w > 0 && f.h > 0, "feature map ", shape_str(in[0].shape), " is empty");
        if (mxnet_style(in.size())) {
            check(!aspect_ratios_.empty(), "MXNet-style priors (one input, image size -233, no max sizes) need at "
                                           "least one aspect ratio (param 2)");
            out[0] = TensorDesc{{4 * f.w * f.h * mxnet_num_prior()}, DType::F32};
            return;
        }
        if (image_width_ == kFromInput || image_height_ == kFromInput) {
            check(in.size() == 2, "image size -233 (params 9/10) takes the size from input 1, but there is one input");
            const NcnnDims img = ncnn_dims(in[1].shape);
            check((image_width_ != kFromInput || img.w > 0) && (image_height_ != kFromInput || img.h > 0),
                  "image input ", shape_str(in[1].shape), " is empty");
        }
        out[0] = TensorDesc{{2, 4 * f.w * f.h * caffe_num_prior()}, DType::F32};
    }

    // Only the inputs' shapes matter (small prior tables are computed while planning).
    bool outputs_from_shapes_only() const override { return true; }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const NcnnDims f = ncnn_dims(in[0].shape());
        if (mxnet_style(in.size())) forward_mxnet(static_cast<int>(f.w), static_cast<int>(f.h), out[0], ctx);
        else forward_caffe(in, static_cast<int>(f.w), static_cast<int>(f.h), out[0], ctx);
    }

private:
    bool mxnet_style(size_t inputs) const
    {
        return inputs == 1 && image_width_ == kFromInput && image_height_ == kFromInput && max_sizes_.empty();
    }
    int64_t mxnet_num_prior() const
    {
        return static_cast<int64_t>(min_sizes_.size()) - 1 + static_cast<int64_t>(aspect_ratios_.size());
    }
    int64_t caffe_num_prior() const
    {
        const int64_t mins = static_cast<int64_t>(min_sizes_.size()), ratios = static_cast<int64_t>(aspect_ratios_.size());
        return mins + static_cast<int64_t>(max_sizes_.size()) + mins * ratios * (flip_ ? 2 : 1);
    }

    void forward_mxnet(int w, int h, Tensor& out, const ExecContext& ctx) const
    {
        const float step_w = step_width_ == -233.f ? 1.f / static_cast<float>(w) : step_width_;
        const float step_h = step_height_ == -233.f ? 1.f / static_cast<float>(h) : step_height_;
        const int64_t num_prior = mxnet_num_prior();
        float* base = out.data<float>();
        ctx.parallel_for(h, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                float* box = base + i * w * num_prior * 4;
                const float cy = offset_ * step_h + static_cast<float>(i) * step_h;
                float cx = offset_ * step_w;
                for (int j = 0; j < w; ++j) {
                    auto put = [&](float half_w, float half_h) {
                        box[0] = cx - half_w;
                        box[1] = cy - half_h;
                        box[2] = cx + half_w;
                        box[3] = cy + half_h;
                        box += 4;
                    };
                    // Square boxes of every size (in units of the feature height, so the
                    // width is scaled by h/w), then the other ratios at the first size.
                    for (float size : min_sizes_) put(size * h / w / 2, size / 2);
                    const float size = min_sizes_[0];
                    for (size_t r = 1; r < aspect_ratios_.size(); ++r) {
                        const float ratio = std::sqrt(aspect_ratios_[r]);
                        put(size * h / w * ratio / 2, size / ratio / 2);
                    }
                    cx += step_w; // accumulated, as ncnn does
                }
            }
        });
        if (clip_) clip01(base, out.numel());
    }

    void forward_caffe(const std::vector<Tensor>& in, int w, int h, Tensor& out, const ExecContext& ctx) const
    {
        int image_w = image_width_, image_h = image_height_;
        if (image_w == kFromInput || image_h == kFromInput) {
            const NcnnDims img = ncnn_dims(in[1].shape());
            if (image_w == kFromInput) image_w = static_cast<int>(img.w);
            if (image_h == kFromInput) image_h = static_cast<int>(img.h);
        }
        float step_w = step_width_, step_h = step_height_;
        if (step_w == -233.f) {
            step_w = static_cast<float>(image_w) / static_cast<float>(w);
            if (step_mmdetection_) step_w = std::ceil(step_w);
        }
        if (step_h == -233.f) {
            step_h = static_cast<float>(image_h) / static_cast<float>(h);
            if (step_mmdetection_) step_h = std::ceil(step_h);
        }
        const int64_t num_prior = caffe_num_prior();
        const int64_t row = 4 * static_cast<int64_t>(w) * h * num_prior;
        const float iw = static_cast<float>(image_w), ih = static_cast<float>(image_h);
        float* base = out.data<float>();
        ctx.parallel_for(h, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                float* box = base + i * w * num_prior * 4;
                const float fi = static_cast<float>(i);
                float cx = offset_ * step_w;
                float cy = offset_ * step_h + fi * step_h;
                if (center_mmdetection_) {
                    cx = offset_ * (step_w - 1);
                    cy = offset_ * (step_h - 1) + fi * step_h;
                }
                for (int j = 0; j < w; ++j) {
                    auto put = [&](float bw, float bh) {
                        box[0] = (cx - bw * 0.5f) / iw;
                        box[1] = (cy - bh * 0.5f) / ih;
                        box[2] = (cx + bw * 0.5f) / iw;
                        box[3] = (cy + bh * 0.5f) / ih;
                        box += 4;
                    };
                    for (size_t k = 0; k < min_sizes_.size(); ++k) {
                        const float min_size = min_sizes_[k];
                        put(min_size, min_size);
                        if (!max_sizes_.empty()) {
                            const float s = std::sqrt(min_size * max_sizes_[k]);
                            put(s, s);
                        }
                        for (float ar : aspect_ratios_) {
                            const float bw = min_size * std::sqrt(ar), bh = min_size / std::sqrt(ar);
                            put(bw, bh);
                            if (flip_) put(bh, bw);
                        }
                    }
                    cx += step_w; // accumulated, as ncnn does
                }
            }
        });
        if (clip_) clip01(base, row);
        float* var = base + row;
        for (int64_t i = 0; i < row; i += 4)
            for (int k = 0; k < 4; ++k) var[i + k] = variances_[k];
    }

    static void clip01(float* p, int64_t n)
    {
        for (int64_t i = 0; i < n; ++i) p[i] = std::min(std::max(p[i], 0.f), 1.f);
    }

    std::vector<float> min_sizes_, max_sizes_, aspect_ratios_;
    float variances_[4] = {0.1f, 0.1f, 0.2f, 0.2f};
    bool flip_ = true, clip_ = false;
    int image_width_ = 0, image_height_ = 0;
    float step_width_ = -233.f, step_height_ = -233.f, offset_ = 0.f;
    bool step_mmdetection_ = false, center_mmdetection_ = false;
};

} // namespace

std::unique_ptr<Op> make_prior_box() { return std::make_unique<PriorBox>(); }

} // namespace kestrel
