// Pooling (ncnn params): max/avg, global, adaptive, and ncnn's four pad modes.
// Input (c,h,w). Global pooling gives (c,) as in ncnn. Max pooling also takes
// int8 (I8) input (padding counts as -128, the output stays I8); ncnn has no
// int8 average pooling, so an I8 input to average pooling is rejected.
//
// ncnn details reproduced here (src/layer/pooling.cpp):
//  * pad_mode 0 adds Caffe's ceil-mode tail `stride - (w+pl+pr-k) % stride` on the right/bottom.
//  * Max pooling takes the max over the whole window, pads included (-FLT_MAX / -128).
//  * Average with count_include_pad=1 divides by kernel_h*kernel_w, tail padding included.
//  * Average with count_include_pad=0 counts the window positions inside
//    [pad_top, padded_h - pad_bottom - tail) of the padded input, where pad_top and
//    pad_bottom are the *param* pads. In modes 0/1 that is exactly the real input;
//    in the SAME modes (2/3) the computed SAME padding is therefore counted (its
//    zeros enter the divisor), which is ncnn's behaviour. A window with no counted
//    position gives 0 (ncnn divides 0 by 0).
//  * Adaptive windows are [floor(i*in/out), ceil((i+1)*in/out)); the average is sum / hk / wk.
#include <algorithm>
#include <cfloat>
#include <cstdint>

#include "ops/registry.h"
#include "ops/quant/int8.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum PadMode { kFull = 0, kValid = 1, kSameUpper = 2, kSameLower = 3 };

// Pads actually applied (pad_right/bottom include the ceil-mode tail) and output size.
struct PoolGeometry {
    int64_t pad_left = 0, pad_right = 0, pad_top = 0, pad_bottom = 0;
    int64_t out_h = 0, out_w = 0;
    // Input-coordinate range counted by average pooling without count_include_pad.
    int64_t count_y0 = 0, count_y1 = 0, count_x0 = 0, count_x1 = 0;
};

template <class T> T pad_value_for_max();
template <> float pad_value_for_max<float>() { return -FLT_MAX; }
template <> int8_t pad_value_for_max<int8_t>() { return -128; }

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
        if (global_) return;
        if (adaptive_) {
            out_w_ = pd.get_int(8, 0);
            out_h_ = pd.get_int(18, out_w_);
            check(out_w_ > 0 || out_w_ == -233, "adaptive out_w (param 8) must be > 0 or -233, got ", out_w_);
            check(out_h_ > 0 || out_h_ == -233, "adaptive out_h (param 18) must be > 0 or -233, got ", out_h_);
            return;
        }
        kernel_w_ = positive_param(pd, 1, 0, "kernel_w");
        kernel_h_ = positive_param(pd, 11, kernel_w_, "kernel_h");
        stride_w_ = positive_param(pd, 2, 1, "stride_w");
        stride_h_ = positive_param(pd, 12, stride_w_, "stride_h");
        pad_left_ = pd.get_int(3, 0);
        pad_right_ = pd.get_int(14, pad_left_);
        pad_top_ = pd.get_int(13, pad_left_);
        pad_bottom_ = pd.get_int(15, pad_top_);
        for (int p : {pad_left_, pad_right_, pad_top_, pad_bottom_})
            check(p >= 0, "pads (params 3/14/13/15) must be >= 0, got ", p);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const DType dt = in[0].dtype;
        check(dt == DType::F32 || dt == DType::I8, "input must be float32 or int8, got ", dtype_name(dt));
        check(dt == DType::F32 || type_ == 0, "int8 input is only supported by max pooling (ncnn has no int8 average pooling)");
        const Shape& s = in[0].shape;
        check(s.size() == 3, "expects a (c,h,w) input, got ", shape_str(s));
        check(s[1] > 0 && s[2] > 0, "expects a non-empty spatial size, got ", shape_str(s));
        if (global_) {
            out[0] = make_desc({s[0]}, dt);
            return;
        }
        if (adaptive_) {
            out[0] = make_desc({s[0], out_h_ == -233 ? s[1] : out_h_, out_w_ == -233 ? s[2] : out_w_}, dt);
            return;
        }
        const PoolGeometry g = geometry(s[1], s[2]);
        check(g.out_h > 0 && g.out_w > 0, "kernel ", kernel_h_, "x", kernel_w_, " does not fit the padded input ",
              s[1] + g.pad_top + g.pad_bottom, "x", s[2] + g.pad_left + g.pad_right);
        out[0] = make_desc({s[0], g.out_h, g.out_w}, dt);
    }

    int64_t macs(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) const override
    {
        if (global_ || adaptive_) return shape_numel(in[0].shape);
        return shape_numel(out[0].shape) * kernel_h_ * kernel_w_;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        if (in[0].dtype() == DType::I8)
            run<int8_t>(in[0], out[0], ctx);
        else
            run<float>(in[0], out[0], ctx);
    }

private:
    template <class T>
    void run(const Tensor& x, Tensor& y, const ExecContext& ctx) const
    {
        const int64_t c = x.dim(0), h = x.dim(1), w = x.dim(2);
        const int64_t oh = global_ ? 1 : y.dim(1), ow = global_ ? 1 : y.dim(2);
        const PoolGeometry g = (global_ || adaptive_) ? PoolGeometry{} : geometry(h, w);
        ctx.parallel_for(c, [&](int64_t begin, int64_t end) {
            for (int64_t ch = begin; ch < end; ++ch) {
                const T* plane = x.data<T>() + ch * h * w;
                T* o = y.data<T>() + ch * oh * ow;
                if (global_)
                    o[0] = global_pool(plane, h * w);
                else if (adaptive_)
                    adaptive_pool(plane, h, w, o, oh, ow);
                else
                    window_pool(plane, h, w, o, g);
            }
        });
    }

    template <class T>
    T global_pool(const T* p, int64_t size) const
    {
        if (type_ == 0) {
            T m = p[0];
            for (int64_t i = 0; i < size; ++i) m = std::max(m, p[i]);
            return m;
        }
        float sum = 0.f;
        for (int64_t i = 0; i < size; ++i) sum += static_cast<float>(p[i]);
        return static_cast<T>(sum / static_cast<float>(size));
    }

    template <class T>
    void adaptive_pool(const T* p, int64_t h, int64_t w, T* o, int64_t oh, int64_t ow) const
    {
        for (int64_t i = 0; i < oh; ++i) {
            const int64_t y0 = h * i / oh, y1 = (h * (i + 1) + oh - 1) / oh;
            for (int64_t j = 0; j < ow; ++j) {
                const int64_t x0 = w * j / ow, x1 = (w * (j + 1) + ow - 1) / ow;
                if (type_ == 0) {
                    T m = p[y0 * w + x0];
                    for (int64_t y = y0; y < y1; ++y)
                        for (int64_t x = x0; x < x1; ++x) m = std::max(m, p[y * w + x]);
                    o[i * ow + j] = m;
                } else {
                    float sum = 0.f;
                    for (int64_t y = y0; y < y1; ++y)
                        for (int64_t x = x0; x < x1; ++x) sum += static_cast<float>(p[y * w + x]);
                    o[i * ow + j] = static_cast<T>(sum / static_cast<float>(y1 - y0) / static_cast<float>(x1 - x0));
                }
            }
        }
    }

    // Kernel pooling over the (virtually) padded plane; window positions are
    // visited row-major as ncnn does.
    template <class T>
    void window_pool(const T* p, int64_t h, int64_t w, T* o, const PoolGeometry& g) const
    {
        const T pad = type_ == 0 ? pad_value_for_max<T>() : T(0);
        auto at = [&](int64_t y, int64_t x) { return (y < 0 || y >= h || x < 0 || x >= w) ? pad : p[y * w + x]; };
        const float maxk = static_cast<float>(static_cast<int64_t>(kernel_h_) * kernel_w_);
        for (int64_t oy = 0; oy < g.out_h; ++oy) {
            const int64_t y0 = oy * stride_h_ - g.pad_top;
            for (int64_t ox = 0; ox < g.out_w; ++ox) {
                const int64_t x0 = ox * stride_w_ - g.pad_left;
                const bool inside = y0 >= 0 && x0 >= 0 && y0 + kernel_h_ <= h && x0 + kernel_w_ <= w;
                if (inside && (type_ == 0 || count_include_pad_ ||
                               (y0 >= g.count_y0 && x0 >= g.count_x0 && y0 + kernel_h_ <= g.count_y1 &&
                                x0 + kernel_w_ <= g.count_x1))) {
                    // Fast path: the window is real input only (and all of it is counted).
                    const T* wp = p + y0 * w + x0;
                    if (type_ == 0) {
                        T m = wp[0];
                        for (int64_t ky = 0; ky < kernel_h_; ++ky)
                            for (int64_t kx = 0; kx < kernel_w_; ++kx) m = std::max(m, wp[ky * w + kx]);
                        o[oy * g.out_w + ox] = m;
                    } else {
                        float sum = 0.f;
                        for (int64_t ky = 0; ky < kernel_h_; ++ky)
                            for (int64_t kx = 0; kx < kernel_w_; ++kx) sum += static_cast<float>(wp[ky * w + kx]);
                        o[oy * g.out_w + ox] = static_cast<T>(sum / maxk);
                    }
                    continue;
                }
                if (type_ == 0) {
                    T m = at(y0, x0);
                    for (int64_t ky = 0; ky < kernel_h_; ++ky)
                        for (int64_t kx = 0; kx < kernel_w_; ++kx) m = std::max(m, at(y0 + ky, x0 + kx));
                    o[oy * g.out_w + ox] = m;
                    continue;
                }
                float sum = 0.f;
                int64_t area = 0;
                for (int64_t ky = 0; ky < kernel_h_; ++ky) {
                    const int64_t y = y0 + ky;
                    if (!count_include_pad_ && (y < g.count_y0 || y >= g.count_y1)) continue;
                    for (int64_t kx = 0; kx < kernel_w_; ++kx) {
                        const int64_t x = x0 + kx;
                        if (!count_include_pad_ && (x < g.count_x0 || x >= g.count_x1)) continue;
                        sum += static_cast<float>(at(y, x));
                        ++area;
                    }
                }
                const float v = count_include_pad_ ? sum / maxk : (area > 0 ? sum / static_cast<float>(area) : 0.f);
                o[oy * g.out_w + ox] = static_cast<T>(v);
            }
        }
    }

    PoolGeometry geometry(int64_t h, int64_t w) const
    {
        PoolGeometry g;
        g.pad_left = pad_left_, g.pad_right = pad_right_, g.pad_top = pad_top_, g.pad_bottom = pad_bottom_;
        if (pad_mode_ == kFull) {
            // Caffe ceil mode: extra tail padding so the last window covers the end.
            const int64_t wtail = (w + pad_left_ + pad_right_ - kernel_w_) % stride_w_;
            const int64_t htail = (h + pad_top_ + pad_bottom_ - kernel_h_) % stride_h_;
            if (wtail > 0) g.pad_right += stride_w_ - wtail;
            if (htail > 0) g.pad_bottom += stride_h_ - htail;
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
        if (pad_mode_ == kSameUpper || pad_mode_ == kSameLower) {
            // ncnn excludes only the param pads here, so SAME padding is counted.
            g.count_y0 = pad_top_ - g.pad_top, g.count_y1 = h + g.pad_bottom - pad_bottom_;
            g.count_x0 = pad_left_ - g.pad_left, g.count_x1 = w + g.pad_right - pad_right_;
        } else {
            g.count_y0 = 0, g.count_y1 = h, g.count_x0 = 0, g.count_x1 = w;
        }
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
