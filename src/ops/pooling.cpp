// Pooling (ncnn params): max/avg, global, adaptive, and ncnn's four pad modes.
// Input (c,h,w). Global pooling gives (c,) as in ncnn.
#include <cfloat>

#include "ops/builtin_ops.h"
#include "ops/op_util.h"

namespace kestrel {

namespace {

enum PadMode { kFull = 0, kValid = 1, kSameUpper = 2, kSameLower = 3 };

// Pads (including ncnn's ceil-mode tail in full mode) and output size.
struct PoolGeometry {
    int64_t pad_left, pad_right, pad_top, pad_bottom; // pad_right/bottom include the tail
    int64_t tail_w, tail_h;
    int64_t out_h, out_w;
};

class Pooling : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        type_ = pd.get_int(0, 0);
        check(type_ == 0 || type_ == 1, "pooling_type (param 0) must be 0 (max) or 1 (avg), got ", type_);
        global_ = pd.get_int(4, 0) != 0;
        adaptive_ = pd.get_int(7, 0) != 0;
        pad_mode_ = pd.get_int(5, 0);
        check(pad_mode_ >= 0 && pad_mode_ <= 3, "pad_mode (param 5) must be 0..3, got ", pad_mode_);
        count_include_pad_ = pd.get_int(6, 0) != 0;
        if (adaptive_) {
            out_w_ = pd.get_int(8, 0);
            out_h_ = pd.get_int(18, out_w_);
            check((out_w_ > 0 || out_w_ == -233) && (out_h_ > 0 || out_h_ == -233),
                  "adaptive out_w/out_h (params 8/18) must be > 0 or -233");
        }
        if (global_ || adaptive_) return;
        kernel_w_ = positive_param(pd, 1, 0, "kernel_w");
        kernel_h_ = positive_param(pd, 11, kernel_w_, "kernel_h");
        stride_w_ = positive_param(pd, 2, 1, "stride_w");
        stride_h_ = positive_param(pd, 12, stride_w_, "stride_h");
        pad_left_ = pd.get_int(3, 0);
        pad_right_ = pd.get_int(14, pad_left_);
        pad_top_ = pd.get_int(13, pad_left_);
        pad_bottom_ = pd.get_int(15, pad_top_);
        for (int p : {pad_left_, pad_right_, pad_top_, pad_bottom_}) check(p >= 0, "pads must be >= 0, got ", p);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        check(s.size() == 3, "expects a (c,h,w) input, got ", shape_str(s));
        if (global_) {
            out[0] = TensorDesc{{s[0]}, DType::F32};
            return;
        }
        if (adaptive_) {
            out[0] = TensorDesc{{s[0], out_h_ == -233 ? s[1] : out_h_, out_w_ == -233 ? s[2] : out_w_}, DType::F32};
            return;
        }
        const PoolGeometry g = geometry(s[1], s[2]);
        check(g.out_h > 0 && g.out_w > 0, "kernel ", kernel_h_, "x", kernel_w_, " does not fit the padded input ",
              s[1], "x", s[2]);
        out[0] = TensorDesc{{s[0], g.out_h, g.out_w}, DType::F32};
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        if (global_ || adaptive_) return shape_numel(in[0].shape);
        return shape_numel(out[0].shape) * kernel_h_ * kernel_w_;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Tensor& x = in[0];
        const int64_t c = x.dim(0), h = x.dim(1), w = x.dim(2);
        const int64_t oh = global_ ? 1 : out[0].dim(1), ow = global_ ? 1 : out[0].dim(2);
        const PoolGeometry g = (global_ || adaptive_) ? PoolGeometry{} : geometry(h, w);
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            for (int64_t ch = begin; ch < end; ++ch) {
                const float* plane = x.data<float>() + ch * h * w;
                float* o = out[0].data<float>() + ch * oh * ow;
                for (int64_t oy = 0; oy < oh; ++oy)
                    for (int64_t ox = 0; ox < ow; ++ox) o[oy * ow + ox] = pool_window(plane, h, w, oy, ox, oh, ow, g);
            }
        });
    }

private:
    // Value of one output element. Windows are given in padded coordinates;
    // padding counts as -inf for max and 0 for avg (divisor per count_include_pad).
    float pool_window(const float* plane, int64_t h, int64_t w, int64_t oy, int64_t ox, int64_t oh, int64_t ow,
                      const PoolGeometry& g) const
    {
        int64_t y0, y1, x0, x1; // window in input coordinates, may extend into padding
        if (global_) {
            y0 = 0, y1 = h, x0 = 0, x1 = w;
        } else if (adaptive_) {
            y0 = oy * h / oh, y1 = ((oy + 1) * h + oh - 1) / oh;
            x0 = ox * w / ow, x1 = ((ox + 1) * w + ow - 1) / ow;
        } else {
            y0 = oy * stride_h_ - g.pad_top, y1 = y0 + kernel_h_;
            x0 = ox * stride_w_ - g.pad_left, x1 = x0 + kernel_w_;
        }
        const int64_t cy0 = std::max<int64_t>(y0, 0), cy1 = std::min(y1, h);
        const int64_t cx0 = std::max<int64_t>(x0, 0), cx1 = std::min(x1, w);
        if (type_ == 0) {
            float m = (cy1 - cy0 < y1 - y0 || cx1 - cx0 < x1 - x0) ? -FLT_MAX : plane[cy0 * w + cx0];
            for (int64_t y = cy0; y < cy1; ++y)
                for (int64_t x = cx0; x < cx1; ++x) m = std::max(m, plane[y * w + x]);
            return m;
        }
        float sum = 0.f;
        for (int64_t y = cy0; y < cy1; ++y)
            for (int64_t x = cx0; x < cx1; ++x) sum += plane[y * w + x];
        int64_t count = (cy1 - cy0) * (cx1 - cx0);
        if (!global_ && !adaptive_ && count_include_pad_) count = static_cast<int64_t>(kernel_h_) * kernel_w_;
        return count > 0 ? sum / static_cast<float>(count) : 0.f;
    }

    PoolGeometry geometry(int64_t h, int64_t w) const
    {
        PoolGeometry g{pad_left_, pad_right_, pad_top_, pad_bottom_, 0, 0, 0, 0};
        if (pad_mode_ == kFull) {
            // Caffe ceil mode: extra tail padding so the last window covers the end.
            const int64_t wtail = (w + pad_left_ + pad_right_ - kernel_w_) % stride_w_;
            const int64_t htail = (h + pad_top_ + pad_bottom_ - kernel_h_) % stride_h_;
            g.tail_w = wtail > 0 ? stride_w_ - wtail : 0;
            g.tail_h = htail > 0 ? stride_h_ - htail : 0;
            g.pad_right += g.tail_w;
            g.pad_bottom += g.tail_h;
        } else if (pad_mode_ == kSameUpper || pad_mode_ == kSameLower) {
            const int64_t wpad = std::max<int64_t>(0, kernel_w_ + (w - 1) / stride_w_ * stride_w_ - w);
            const int64_t hpad = std::max<int64_t>(0, kernel_h_ + (h - 1) / stride_h_ * stride_h_ - h);
            const bool upper = pad_mode_ == kSameUpper;
            g.pad_left = upper ? wpad / 2 : wpad - wpad / 2;
            g.pad_right = wpad - g.pad_left;
            g.pad_top = upper ? hpad / 2 : hpad - hpad / 2;
            g.pad_bottom = hpad - g.pad_top;
        }
        const int64_t pw = w + g.pad_left + g.pad_right, ph = h + g.pad_top + g.pad_bottom;
        g.out_w = pw >= kernel_w_ ? (pw - kernel_w_) / stride_w_ + 1 : 0;
        g.out_h = ph >= kernel_h_ ? (ph - kernel_h_) / stride_h_ + 1 : 0;
        return g;
    }

    int type_ = 0, pad_mode_ = 0;
    bool global_ = false, adaptive_ = false, count_include_pad_ = false;
    int kernel_w_ = 0, kernel_h_ = 0, stride_w_ = 1, stride_h_ = 1;
    int pad_left_ = 0, pad_right_ = 0, pad_top_ = 0, pad_bottom_ = 0;
    int out_w_ = 0, out_h_ = 0;
};

} // namespace

std::unique_ptr<Op> make_pooling() { return std::make_unique<Pooling>(); }

} // namespace kestrel
