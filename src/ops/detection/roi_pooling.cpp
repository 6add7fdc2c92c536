// Region pooling over integer bins (ncnn, Fast / R-FCN detectors): input 0 a
// feature map (C, H, W) float32, input 1 one region [x1, y1, x2, y2] (4
// values, image coordinates). Bin (ph, pw) covers rows [hstart, hend) and
// columns [wstart, wend), clamped to the map; an empty bin gives 0.
//   ROIPooling    0=pooled_width 1=pooled_height 2=spatial_scale (1): corners
//                 round(v * scale), the region (x2-x1+1, y2-y1+1) at least 1,
//                 bins [floor(p*bin), ceil((p+1)*bin)) from the corner; the
//                 max of each bin. Output (C, ph, pw).
//   PSROIPooling  0=pooled_width (7) 1=pooled_height (7) 2=spatial_scale
//                 (0.0625) 3=output_dim: corners round(v) * scale (x2, y2 as
//                 round(v + 1)), the region at least 0.1, bins
//                 [floor(corner + p*bin), ceil(corner + (p+1)*bin)); the mean
//                 of bin (ph, pw) of channel (q*ph_count + ph)*pw_count + pw
//                 (position-sensitive). C must be output_dim*ph*pw; output
//                 (output_dim, ph, pw).
#include <algorithm>
#include <cmath>

#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class RoiPooling : public Op {
public:
    explicit RoiPooling(bool position_sensitive) : ps_(position_sensitive) {}

    void load_param(const ParamDict& pd) override
    {
        pooled_w_ = positive_param(pd, 0, ps_ ? 7 : 0, "pooled_width");
        pooled_h_ = positive_param(pd, 1, ps_ ? 7 : 0, "pooled_height");
        scale_ = pd.get_float(2, ps_ ? 0.0625f : 1.f);
        check(std::isfinite(scale_), "spatial_scale (param 2) must be finite");
        if (ps_) output_dim_ = positive_param(pd, 3, 0, "output_dim");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        expect_f32(in[1], "roi (input 1)");
        const Shape& x = in[0].shape;
        check(x.size() == 3 && x[1] > 0 && x[2] > 0, "expects a (C, H, W) feature map, got ", shape_str(x));
        check(shape_numel(in[1].shape) == 4, "roi (input 1) must hold 4 values [x1, y1, x2, y2], got ",
              shape_str(in[1].shape));
        if (ps_)
            check(x[0] == output_dim_ * pooled_h_ * pooled_w_, "channels ", x[0], " must be output_dim x pooled_height x ",
                  "pooled_width = ", output_dim_ * pooled_h_ * pooled_w_);
        out[0] = TensorDesc(Shape{ps_ ? output_dim_ : x[0], pooled_h_, pooled_w_});
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const int64_t h = in[0].dim(1), w = in[0].dim(2);
        const Region r = region(in[1].data<float>());
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        ctx.parallel_for(out[0].dim(0), [&](int64_t begin, int64_t end) {
            for (int64_t q = begin; q < end; ++q)
                for (int64_t ph = 0; ph < pooled_h_; ++ph)
                    for (int64_t pw = 0; pw < pooled_w_; ++pw) {
                        const int64_t channel = ps_ ? (q * pooled_h_ + ph) * pooled_w_ + pw : q;
                        const Bin b = bin(r, ph, pw, h, w);
                        y[(q * pooled_h_ + ph) * pooled_w_ + pw] = pool(x + channel * h * w, w, b);
                    }
        });
    }

private:
    struct Region {
        float x1, y1, bin_w, bin_h;
    };
    struct Bin {
        int64_t y0, y1, x0, x1; // [y0, y1) x [x0, x1), clamped to the map
    };

    Region region(const float* roi) const
    {
        for (int k = 0; k < 4; ++k) check(std::isfinite(roi[k]), "roi coordinate ", roi[k], " is not finite");
        if (!ps_) {
            const float x1 = std::round(roi[0] * scale_), y1 = std::round(roi[1] * scale_);
            const float x2 = std::round(roi[2] * scale_), y2 = std::round(roi[3] * scale_);
            const float rw = std::max(x2 - x1 + 1.f, 1.f), rh = std::max(y2 - y1 + 1.f, 1.f);
            return Region{x1, y1, rw / static_cast<float>(pooled_w_), rh / static_cast<float>(pooled_h_)};
        }
        const float x1 = std::round(roi[0]) * scale_, y1 = std::round(roi[1]) * scale_;
        const float x2 = std::round(roi[2] + 1.f) * scale_, y2 = std::round(roi[3] + 1.f) * scale_;
        const float rw = std::max(x2 - x1, 0.1f), rh = std::max(y2 - y1, 0.1f);
        return Region{x1, y1, rw / static_cast<float>(pooled_w_), rh / static_cast<float>(pooled_h_)};
    }

    Bin bin(const Region& r, int64_t ph, int64_t pw, int64_t h, int64_t w) const
    {
        const float fph = static_cast<float>(ph), fpw = static_cast<float>(pw);
        float y0, y1, x0, x1;
        if (ps_) {
            y0 = std::floor(r.y1 + fph * r.bin_h), y1 = std::ceil(r.y1 + (fph + 1) * r.bin_h);
            x0 = std::floor(r.x1 + fpw * r.bin_w), x1 = std::ceil(r.x1 + (fpw + 1) * r.bin_w);
        } else {
            y0 = r.y1 + std::floor(fph * r.bin_h), y1 = r.y1 + std::ceil((fph + 1) * r.bin_h);
            x0 = r.x1 + std::floor(fpw * r.bin_w), x1 = r.x1 + std::ceil((fpw + 1) * r.bin_w);
        }
        // Clamped as floats first: a huge or NaN bin edge must not reach the integer cast.
        auto clamp = [](float v, int64_t n) {
            return !(v > 0.f) ? int64_t{0} : v >= static_cast<float>(n) ? n : static_cast<int64_t>(v);
        };
        return Bin{clamp(y0, h), clamp(y1, h), clamp(x0, w), clamp(x1, w)};
    }

    // The max (ROIPooling) or mean (PSROIPooling) of a bin; 0 when it is empty.
    float pool(const float* plane, int64_t w, const Bin& b) const
    {
        if (b.y1 <= b.y0 || b.x1 <= b.x0) return 0.f;
        float best = plane[b.y0 * w + b.x0], sum = 0.f;
        for (int64_t yy = b.y0; yy < b.y1; ++yy)
            for (int64_t xx = b.x0; xx < b.x1; ++xx) {
                best = std::max(best, plane[yy * w + xx]);
                sum += plane[yy * w + xx];
            }
        return ps_ ? sum / static_cast<float>((b.y1 - b.y0) * (b.x1 - b.x0)) : best;
    }

    bool ps_;
    int64_t pooled_w_ = 0, pooled_h_ = 0, output_dim_ = 0;
    float scale_ = 1.f;
};

} // namespace

std::unique_ptr<Op> make_roi_pooling() { return std::make_unique<RoiPooling>(false); }
std::unique_ptr<Op> make_psroi_pooling() { return std::make_unique<RoiPooling>(true); }

} // namespace kestrel
