// STFT (ONNX, opset 17): the short-time Fourier transform of a batch of
// float32 signals (batch, length, 1 real / 2 complex). Inputs: signal,
// frame_step (one integer >= 1), window (optional, frame_length values),
// frame_length (optional, one integer; the window's length when both are
// given). Frame f holds samples [f * frame_step, + frame_length), times the
// window; its DFT of frame_length points (dft_sums.h) gives bins 0..n/2
// (param 0 = onesided, default 1; real signals only) or all n. Output (batch,
// frames, bins, 2), frames = (length - frame_length) / frame_step + 1.
// Param 20=dynamic: frame_step / frame_length known only at run time.
#include <vector>

#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"
#include "ops/signal/dft_sums.h"

namespace kestrel {

namespace {

constexpr int64_t kMaxFrameLength = int64_t(1) << 16; // direct sums: n^2 products a frame

class Stft : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        onesided_ = pd.get_int(0, 1) != 0;
        dynamic_ = pd.get_int(20, 0) != 0;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 4);
        expect_output_count(out, 1);
        expect_f32(in[0], "signal (input 0)");
        const Shape& s = in[0].shape;
        check(s.size() == 3 && (s[2] == 1 || s[2] == 2), "signal (input 0) must be (batch, length, 1 or 2), got ",
              shape_str(s));
        if (has(in, 2)) {
            expect_f32(in[2], "window (input 2)");
            check(in[2].shape.size() == 1, "window (input 2) must be 1-D, got ", shape_str(in[2].shape));
        }
        if (!shape_values_known(in) && dynamic_) {
            out[0] = TensorDesc(Shape{0}); // placeholder: forward() gives the real shape
            return;
        }
        const Frames f = frames(s, nd::known_value(in[1], "frame_step (input 1)"),
                                has(in, 3) ? &nd::known_value(in[3], "frame_length (input 3)") : nullptr,
                                has(in, 2) ? in[2].shape[0] : -1);
        out[0] = TensorDesc(Shape{s[0], f.count, f.bins, 2});
    }
    int64_t macs(const std::vector<TensorDesc>&, const std::vector<TensorDesc>& out) const override
    {
        const Shape& o = out[0].shape;
        return o.size() == 4 ? shape_numel(o) / 2 * frame_length_of(o) : 0; // a placeholder: 0
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return shape_values_known(in); }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s = in[0].shape();
        const bool windowed = in.size() > 2 && in[2].defined() && in[2].numel() > 0;
        const Frames f = frames(s, in[1], in.size() > 3 && in[3].defined() && in[3].numel() > 0 ? &in[3] : nullptr,
                                windowed ? in[2].dim(0) : -1);
        const Shape want{s[0], f.count, f.bins, 2};
        if (out[0].shape() != want) out[0] = Tensor(want);
        const signal::Twiddles twiddles(f.length);
        const int64_t lanes = s[2];
        const float* x = in[0].data<float>();
        const float* window = windowed ? in[2].data<float>() : nullptr;
        float* y = out[0].data<float>();
        ctx.parallel_for(s[0] * f.count * f.bins, [&](int64_t begin, int64_t end) {
            for (int64_t t = begin; t < end; ++t) {
                const int64_t k = t % f.bins, frame = t / f.bins % f.count, b = t / f.bins / f.count;
                const float* first = x + (b * s[1] + frame * f.step) * lanes;
                double re, im;
                signal::dft_bin(twiddles, k, f.length, -1.0, [&](int64_t j, double& xr, double& xi) {
                    const double w = window ? window[j] : 1.0;
                    xr = first[j * lanes] * w;
                    xi = lanes == 2 ? first[j * lanes + 1] * w : 0.0;
                }, re, im);
                y[t * 2] = static_cast<float>(re);
                y[t * 2 + 1] = static_cast<float>(im);
            }
        });
    }

private:
    struct Frames {
        int64_t step, length, count, bins;
    };

    // Input i given (an absent optional input is an empty placeholder).
    static bool has(const std::vector<TensorDesc>& in, size_t i)
    {
        return in.size() > i && shape_numel(in[i].shape) > 0;
    }

    // The output's shape needs frame_step's and frame_length's values (the window's length only).
    static bool shape_values_known(const std::vector<TensorDesc>& in)
    {
        return in[1].value.defined() && (!has(in, 3) || in[3].value.defined());
    }

    // The frames of a signal of shape s: window_length -1 without a window.
    Frames frames(const Shape& s, const Tensor& step_value, const Tensor* length_value, int64_t window_length) const
    {
        Frames f;
        f.step = nd::int_scalar(step_value, "frame_step (input 1)");
        check(f.step >= 1, "frame_step (input 1) must be >= 1, got ", f.step);
        check(length_value || window_length >= 0, "needs a window (input 2) or a frame_length (input 3)");
        f.length = length_value ? nd::int_scalar(*length_value, "frame_length (input 3)") : window_length;
        check(window_length < 0 || f.length == window_length, "frame_length (input 3) ", f.length,
              " differs from the window's length ", window_length);
        check(f.length >= 1 && f.length <= kMaxFrameLength && f.length <= s[1], "frame_length ", f.length,
              " must be in [1, min(", kMaxFrameLength, ", the signal's length ", s[1], ")]");
        check(!onesided_ || s[2] == 1, "onesided (param 0) takes a real signal (last axis 1)");
        f.count = (s[1] - f.length) / f.step + 1;
        f.bins = onesided_ ? f.length / 2 + 1 : f.length;
        signal::checked_dft_products(s[0] * f.count, f.bins, f.length);
        return f;
    }

    // The frame length that gives an output of o's bins (one less for odd onesided lengths: for counting).
    int64_t frame_length_of(const Shape& o) const { return onesided_ ? (o[2] - 1) * 2 : o[2]; }

    bool onesided_ = true, dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_stft() { return std::make_unique<Stft>(); }

} // namespace kestrel
