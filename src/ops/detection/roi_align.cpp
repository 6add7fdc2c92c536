// ROIAlign, ncnn's layer and ONNX's RoiAlign (20=1; written as RoiAlign, params
// 0-5, before: src/frontend/ncnn/legacy_layers.cpp). The ONNX form pools each region
// of interest of X (N, C, H, W) float32
// into an (output_height, output_width) grid. Inputs: X, rois (R, 4) float32
// as [x1, y1, x2, y2] in input coordinates before spatial_scale,
// batch_indices (R) integer in [0, N). Output (R, C, oh, ow).
// Params: 21=output_height (1), 22=output_width (1), 23=sampling_ratio (0: per
// bin ceil(roi size / output size) samples per axis), 24=spatial_scale (1.0),
// 25=mode (0 avg, 1 max), 26=half_pixel (1, default: coordinates are shifted by
// -0.5 pixel; 0 is ONNX's output_half_pixel, where the region is also at
// least 1x1).
// Each bin averages bilinear samples at the centers of a regular grid; samples
// more than one pixel outside the image count as 0, others are clamped to the
// image. mode max takes, over the samples, the largest of the four weighted
// corner terms of each bilinear sample (what ONNX Runtime and the ONNX
// reference compute), not the largest interpolated value.
//
// ncnn's form: X (C, H, W) and one region [x1, y1, x2, y2] (4 values) ->
// (C, pooled_height, pooled_width), averages only. Params 0=pooled_width
// 1=pooled_height 2=spatial_scale (1) 3=sampling_ratio (0) 4=aligned (0: no
// half-pixel shift, regions at least 1x1) 5=version: 1 is the ONNX form's
// sampling above (detectron2's); 0 (legacy) clamps each bin to the image first,
// takes ceil(bin extent) samples per axis spaced by the unclamped bin size,
// and gives 0 for an empty bin.
#include <algorithm>
#include <cmath>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// Bilinear weights of the four pixels around (y, x), as ONNX Runtime clamps them.
struct Sample {
    int64_t y0 = 0, x0 = 0, y1 = 0, x1 = 0;
    float w[4] = {0, 0, 0, 0}; // (y0,x0), (y0,x1), (y1,x0), (y1,x1)
    bool inside = false;
};

Sample bilinear_sample(float y, float x, int64_t h, int64_t w)
{
    Sample s;
    if (!(y >= -1.f && y <= static_cast<float>(h) && x >= -1.f && x <= static_cast<float>(w))) return s;
    s.inside = true;
    y = std::max(y, 0.f);
    x = std::max(x, 0.f);
    s.y0 = std::min(static_cast<int64_t>(y), h - 1);
    s.x0 = std::min(static_cast<int64_t>(x), w - 1);
    s.y1 = std::min(s.y0 + 1, h - 1);
    s.x1 = std::min(s.x0 + 1, w - 1);
    if (s.y0 == h - 1) y = static_cast<float>(s.y0);
    if (s.x0 == w - 1) x = static_cast<float>(s.x0);
    const float ly = y - static_cast<float>(s.y0), lx = x - static_cast<float>(s.x0);
    s.w[0] = (1 - ly) * (1 - lx);
    s.w[1] = (1 - ly) * lx;
    s.w[2] = ly * (1 - lx);
    s.w[3] = ly * lx;
    return s;
}

// Samples per bin and axis at most (a bound against runaway loops on bad regions).
constexpr int kMaxSamples = 4096;

class RoiAlign : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        ncnn_ = !onnx_form(pd, "RoiAlign");
        if (ncnn_) {
            out_w_ = positive_param(pd, 0, 0, "pooled_width");
            out_h_ = positive_param(pd, 1, 0, "pooled_height");
            spatial_scale_ = pd.get_float(2, 1.f);
            sampling_ratio_ = pd.get_int(3, 0);
            check(sampling_ratio_ >= 0 && sampling_ratio_ <= kMaxSamples, "sampling_ratio (param 3) must be in [0, ",
                  kMaxSamples, "], got ", sampling_ratio_);
            half_pixel_ = pd.get_int(4, 0) != 0;
            legacy_ = pd.get_int(5, 0) == 0;
            check(pd.get_int(5, 0) == 0 || pd.get_int(5, 0) == 1, "version (param 5) must be 0 or 1");
            return;
        }
        out_h_ = positive_param(pd, 21, 1, "output_height");
        out_w_ = positive_param(pd, 22, 1, "output_width");
        sampling_ratio_ = pd.get_int(23, 0);
        check(sampling_ratio_ >= 0 && sampling_ratio_ <= kMaxSamples, "sampling_ratio (param 23) must be in [0, ",
              kMaxSamples, "], got ", sampling_ratio_);
        spatial_scale_ = pd.get_float(24, 1.f);
        max_mode_ = pd.get_int(25, 0) != 0;
        half_pixel_ = pd.get_int(26, 1) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        if (ncnn_) {
            expect_input_count(in, 2, 2);
            expect_output_count(out, 1);
            expect_f32(in[0], "X (input 0)");
            expect_f32(in[1], "roi (input 1)");
            const Shape& x = in[0].shape;
            check(x.size() == 3 && x[1] > 0 && x[2] > 0, "X (input 0) must be (C, H, W), got ", shape_str(x));
            check(shape_numel(in[1].shape) == 4, "roi (input 1) must hold 4 values, got ", shape_str(in[1].shape));
            out[0] = TensorDesc({x[0], out_h_, out_w_});
            return;
        }
        expect_input_count(in, 3, 3);
        expect_output_count(out, 1);
        expect_f32(in[0], "X (input 0)");
        expect_f32(in[1], "rois (input 1)");
        const Shape &x = in[0].shape, &r = in[1].shape;
        check(x.size() == 4 && x[2] > 0 && x[3] > 0, "X (input 0) must be (N, C, H, W) with H, W > 0, got ", shape_str(x));
        check(r.size() == 2 && r[1] == 4, "rois (input 1) must be (R, 4), got ", shape_str(r));
        check(in[2].shape == Shape({r[0]}), "batch_indices (input 2) must be (", r[0], "), got ", shape_str(in[2].shape));
        out[0] = TensorDesc({r[0], x[1], out_h_, out_w_});
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        if (ncnn_) {
            // One region over the channels, a batch of one.
            const Tensor x = in[0].view_as({1, in[0].dim(0), in[0].dim(1), in[0].dim(2)}, DType::F32);
            const Region g = region_of(in[1].data<float>());
            ctx.parallel_for(in[0].dim(0), [&](int64_t begin, int64_t end) {
                for (int64_t ch = begin; ch < end; ++ch) {
                    float* y = out[0].data<float>() + ch * out_h_ * out_w_;
                    if (legacy_)
                        pool_region_legacy(x, ch, g, y);
                    else
                        pool_region(x, ch, g, y);
                }
            });
            return;
        }
        const int64_t n = in[0].dim(0), c = in[0].dim(1);
        const std::vector<int64_t> batch = nd::int_values(in[2], "batch_indices (input 2)");
        for (int64_t b : batch) check(b >= 0 && b < n, "batch index ", b, " is outside [0, ", n, ")");
        std::vector<Region> regions;
        for (int64_t r = 0; r < in[1].dim(0); ++r) regions.push_back(region_of(in[1].data<float>() + r * 4));
        ctx.parallel_for(in[1].dim(0) * c, [&](int64_t begin, int64_t end) {
            for (int64_t rc = begin; rc < end; ++rc) {
                const int64_t r = rc / c;
                pool_region(in[0], batch[static_cast<size_t>(r)] * c + rc % c, regions[static_cast<size_t>(r)],
                            out[0].data<float>() + rc * out_h_ * out_w_);
            }
        });
    }

private:
    // A region in input pixels: its top-left corner, bin size and samples per bin.
    struct Region {
        float x1 = 0, y1 = 0, bin_w = 0, bin_h = 0;
        int64_t grid_w = 1, grid_h = 1;
    };

    Region region_of(const float* roi) const
    {
        for (int k = 0; k < 4; ++k) check(std::isfinite(roi[k]), "roi coordinate ", roi[k], " is not finite");
        Region g;
        const float offset = half_pixel_ ? 0.5f : 0.f;
        g.x1 = roi[0] * spatial_scale_ - offset;
        g.y1 = roi[1] * spatial_scale_ - offset;
        float rw = roi[2] * spatial_scale_ - offset - g.x1, rh = roi[3] * spatial_scale_ - offset - g.y1;
        if (!half_pixel_) {
            rw = std::max(rw, 1.f);
            rh = std::max(rh, 1.f);
        }
        g.bin_h = rh / static_cast<float>(out_h_);
        g.bin_w = rw / static_cast<float>(out_w_);
        g.grid_h = sampling_ratio_ > 0 ? sampling_ratio_ : adaptive_samples(g.bin_h);
        g.grid_w = sampling_ratio_ > 0 ? sampling_ratio_ : adaptive_samples(g.bin_w);
        return g;
    }

    // ceil(bin size) samples per axis (0 for an empty or negative bin, which pools to 0).
    static int64_t adaptive_samples(float bin)
    {
        const float n = std::ceil(bin);
        check(n <= static_cast<float>(kMaxSamples), "a region bin of ", bin, " pixels needs more than ", kMaxSamples,
              " samples per axis");
        return n > 0.f ? static_cast<int64_t>(n) : 0;
    }

    // Pools one region of one (n, c) plane into out_h_ x out_w_ values.
    void pool_region(const Tensor& x, int64_t plane, const Region& g, float* y) const
    {
        const int64_t h = x.dim(2), w = x.dim(3);
        const float* p = x.data<float>() + plane * h * w;
        const float x1 = g.x1, y1 = g.y1, bin_h = g.bin_h, bin_w = g.bin_w;
        const int64_t grid_h = g.grid_h, grid_w = g.grid_w;
        const float count = static_cast<float>(std::max<int64_t>(grid_h * grid_w, 1));
        for (int64_t ph = 0; ph < out_h_; ++ph)
            for (int64_t pw = 0; pw < out_w_; ++pw) {
                float acc = 0.f;
                bool first = true;
                for (int64_t iy = 0; iy < grid_h; ++iy) {
                    const float sy = y1 + static_cast<float>(ph) * bin_h +
                                     (static_cast<float>(iy) + 0.5f) * bin_h / static_cast<float>(grid_h);
                    for (int64_t ix = 0; ix < grid_w; ++ix) {
                        const float sx = x1 + static_cast<float>(pw) * bin_w +
                                         (static_cast<float>(ix) + 0.5f) * bin_w / static_cast<float>(grid_w);
                        const Sample s = bilinear_sample(sy, sx, h, w);
                        const float v[4] = {p[s.y0 * w + s.x0], p[s.y0 * w + s.x1], p[s.y1 * w + s.x0], p[s.y1 * w + s.x1]};
                        if (!max_mode_) {
                            for (int k = 0; k < 4; ++k) acc += s.w[k] * v[k];
                            continue;
                        }
                        float m = s.w[0] * v[0];
                        for (int k = 1; k < 4; ++k) m = std::max(m, s.w[k] * v[k]);
                        acc = first ? m : std::max(acc, m);
                        first = false;
                    }
                }
                y[ph * out_w_ + pw] = max_mode_ ? acc : acc / count;
            }
    }

    // ncnn's version 0: each bin clamped to [0, size] first; ceil(clamped
    // extent) samples per axis (or sampling_ratio), spaced by the unclamped
    // bin size; ncnn's bilinear read (no outside test: the samples start
    // inside); the mean, or 0 for an empty bin.
    void pool_region_legacy(const Tensor& x, int64_t plane, const Region& g, float* y) const
    {
        const int64_t h = x.dim(2), w = x.dim(3);
        const float* p = x.data<float>() + plane * h * w;
        const float fh = static_cast<float>(h), fw = static_cast<float>(w);
        for (int64_t ph = 0; ph < out_h_; ++ph)
            for (int64_t pw = 0; pw < out_w_; ++pw) {
                const float y0 = std::clamp(g.y1 + static_cast<float>(ph) * g.bin_h, 0.f, fh);
                const float x0 = std::clamp(g.x1 + static_cast<float>(pw) * g.bin_w, 0.f, fw);
                const float y1 = std::clamp(g.y1 + static_cast<float>(ph + 1) * g.bin_h, 0.f, fh);
                const float x1 = std::clamp(g.x1 + static_cast<float>(pw + 1) * g.bin_w, 0.f, fw);
                if (y1 <= y0 || x1 <= x0) {
                    y[ph * out_w_ + pw] = 0.f;
                    continue;
                }
                const int64_t grid_h = sampling_ratio_ > 0 ? sampling_ratio_ : adaptive_samples(y1 - y0);
                const int64_t grid_w = sampling_ratio_ > 0 ? sampling_ratio_ : adaptive_samples(x1 - x0);
                float sum = 0.f;
                for (int64_t iy = 0; iy < grid_h; ++iy) {
                    const float sy = y0 + (static_cast<float>(iy) + 0.5f) * g.bin_h / static_cast<float>(grid_h);
                    for (int64_t ix = 0; ix < grid_w; ++ix) {
                        const float sx = x0 + (static_cast<float>(ix) + 0.5f) * g.bin_w / static_cast<float>(grid_w);
                        const Sample s = bilinear_sample(sy, sx, h, w);
                        sum += s.w[0] * p[s.y0 * w + s.x0] + s.w[1] * p[s.y0 * w + s.x1] + s.w[2] * p[s.y1 * w + s.x0] +
                               s.w[3] * p[s.y1 * w + s.x1];
                    }
                }
                y[ph * out_w_ + pw] = sum / static_cast<float>(grid_h * grid_w);
            }
    }

    bool ncnn_ = true;
    bool legacy_ = false; // ncnn's version 0
    int out_h_ = 1, out_w_ = 1, sampling_ratio_ = 0;
    float spatial_scale_ = 1.f;
    bool max_mode_ = false, half_pixel_ = true;
};

} // namespace

std::unique_ptr<Op> make_roi_align() { return std::make_unique<RoiAlign>(); }

} // namespace kestrel
