// Spectrogram and InverseSpectrogram (ncnn, torch.stft / torch.istft of a
// batch-less signal), by direct DFT per frame (dft_sums.h, the twiddle table
// made at load). Params: 0=n_fft 2=hoplen (n_fft/4) 3=winlen (n_fft)
// 4=window_type (0 ones, 1 Hann, 2 Hamming 0.54; periodic, winlen long,
// centred in n_fft zeros) 5=center (1) 7=normalized (0; 1: by 1/sqrt(n_fft),
// 2: by 1/sqrt(sum of squared window)); float32.
//   Spectrogram         1=power (0 complex, 1 magnitude, 2 power) 6=pad_type
//                       (with center, n_fft/2 on each side: 0 zeros, 1
//                       replicate, 2 reflect) 8=onesided (1). Input (n) ->
//                       (freqs, frames, 2) for power 0, else (freqs, frames);
//                       frames = (n_padded - n_fft) / hoplen + 1, freqs
//                       n_fft/2+1 (onesided) or n_fft.
//   InverseSpectrogram  1=returns (0 complex, 1 real, 2 imaginary). Input
//                       (freqs, frames, 2), onesided when freqs = n_fft/2+1.
//                       Each frame's inverse DFT, windowed, overlap-added and
//                       divided by the summed squared window where it is not
//                       0; with center the first n_fft/2 samples are cut and
//                       the length is (frames-1)*hoplen + n_fft % 2 (ncnn's),
//                       else (frames-1)*hoplen + n_fft. Output (length, 2) for
//                       returns 0, else (length).
#include <cmath>
#include <vector>

#include "ops/common/op_util.h"
#include "ops/signal/dft_sums.h"

namespace kestrel {

namespace {

// n_fft at most this: the window and twiddle tables are made at load, and a
// direct DFT of more points per frame would take far too long anyway.
constexpr int kMaxFft = 1 << 16;

class Spectrogram : public Op {
public:
    explicit Spectrogram(bool inverse) : inverse_(inverse) {}

    void load_param(const ParamDict& pd) override
    {
        n_fft_ = positive_param(pd, 0, 0, "n_fft");
        check(n_fft_ <= kMaxFft, "n_fft (param 0) ", n_fft_, " exceeds ", kMaxFft);
        mode_ = pd.get_int(1, 0);
        check(mode_ >= 0 && mode_ <= 2, inverse_ ? "returns" : "power", " (param 1) must be 0, 1 or 2, got ", mode_);
        hop_ = positive_param(pd, 2, std::max(n_fft_ / 4, 1), "hoplen");
        const int winlen = positive_param(pd, 3, n_fft_, "winlen");
        check(winlen <= n_fft_, "winlen (param 3) ", winlen, " exceeds n_fft (param 0) ", n_fft_);
        const int window_type = pd.get_int(4, 0);
        check(window_type >= 0 && window_type <= 2, "window_type (param 4) must be 0, 1 or 2, got ", window_type);
        center_ = pd.get_int(5, 1) != 0;
        pad_type_ = pd.get_int(6, 2);
        check(pad_type_ >= 0 && pad_type_ <= 2, "pad_type (param 6) must be 0, 1 or 2, got ", pad_type_);
        normalized_ = pd.get_int(7, 0);
        check(normalized_ >= 0 && normalized_ <= 2, "normalized (param 7) must be 0, 1 or 2, got ", normalized_);
        onesided_ = pd.get_int(8, 1) != 0;
        make_tables(winlen, window_type);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        if (!inverse_) {
            check(s.size() == 1, "expects a 1-D signal, got ", shape_str(s));
            const int64_t padded = s[0] + (center_ ? n_fft_ / 2 * 2 : 0);
            check(padded >= n_fft_, "the signal (", padded, " samples with padding) is shorter than n_fft ", n_fft_);
            check(!center_ || pad_type_ != 2 || s[0] > n_fft_ / 2, "reflect padding needs more than n_fft/2 samples");
            const int64_t frames = (padded - n_fft_) / hop_ + 1, freqs = onesided_ ? n_fft_ / 2 + 1 : n_fft_;
            out[0] = TensorDesc(mode_ == 0 ? Shape{freqs, frames, 2} : Shape{freqs, frames});
            return;
        }
        check(s.size() == 3 && s[2] == 2 && (s[0] == n_fft_ / 2 + 1 || s[0] == n_fft_) && s[1] > 0,
              "expects (freqs, frames, 2) with freqs n_fft/2+1 or n_fft, got ", shape_str(s));
        const int64_t length = inverse_length(s[1]);
        out[0] = TensorDesc(mode_ == 0 ? Shape{length, 2} : Shape{length});
    }

    // Scratch 0 (inverse): the summed squared window per output sample.
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        if (inverse_) ctx.request_scratch(inverse_length(in[0].shape[1]) * 4);
        return nullptr;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        if (inverse_)
            forward_inverse(in[0], out[0], ctx);
        else
            forward_stft(in[0], out[0], ctx);
    }

private:
    void make_tables(int winlen, int window_type)
    {
        window_.assign(static_cast<size_t>(n_fft_), 0.f);
        const int lead = (n_fft_ - winlen) / 2;
        for (int i = 0; i < winlen; ++i) {
            const double x = 2 * signal::kPi * i / winlen;
            window_[static_cast<size_t>(lead + i)] =
                static_cast<float>(window_type == 0 ? 1.0 : window_type == 1 ? signal::hann(x) : signal::hamming(x, 0.54));
        }
        double squares = 0;
        for (float v : window_) squares += static_cast<double>(v) * v;
        norm_ = normalized_ == 1 ? 1.0 / std::sqrt(static_cast<double>(n_fft_)) : normalized_ == 2 ? 1.0 / std::sqrt(squares) : 1.0;
        twiddles_ = signal::Twiddles(n_fft_);
    }

    int64_t inverse_length(int64_t frames) const
    {
        return center_ ? (frames - 1) * hop_ + n_fft_ % 2 : (frames - 1) * hop_ + n_fft_;
    }

    // Sample i of the padded signal (center: n_fft/2 before and after).
    float padded_sample(const float* x, int64_t n, int64_t i) const
    {
        if (!center_) return x[i];
        i -= n_fft_ / 2;
        if (i >= 0 && i < n) return x[i];
        if (pad_type_ == 0) return 0.f;
        if (pad_type_ == 1) return x[i < 0 ? 0 : n - 1];
        return x[i < 0 ? -i : 2 * (n - 1) - i]; // reflect, the edge not repeated
    }

    void forward_stft(const Tensor& x, Tensor& y, const ExecContext& ctx) const
    {
        const int64_t n = x.dim(0), freqs = y.dim(0), frames = y.dim(1);
        ctx.parallel_for(freqs, [&](int64_t begin, int64_t end) {
            for (int64_t f = begin; f < end; ++f)
                for (int64_t t = 0; t < frames; ++t) {
                    double re, im;
                    signal::dft_bin(twiddles_, f, n_fft_, -1.0, [&](int64_t k, double& xr, double& xi) {
                        xr = static_cast<double>(padded_sample(x.data<float>(), n, t * hop_ + k)) * window_[static_cast<size_t>(k)];
                        xi = 0.0;
                    }, re, im);
                    re *= norm_, im *= norm_;
                    float* o = y.data<float>() + (f * frames + t) * (mode_ == 0 ? 2 : 1);
                    if (mode_ == 0) o[0] = static_cast<float>(re), o[1] = static_cast<float>(im);
                    else if (mode_ == 1) o[0] = static_cast<float>(std::sqrt(re * re + im * im));
                    else o[0] = static_cast<float>(re * re + im * im);
                }
        });
    }

    void forward_inverse(const Tensor& spec, Tensor& y, const ExecContext& ctx) const
    {
        const int64_t freqs = spec.dim(0), frames = spec.dim(1), length = y.dim(0);
        const bool onesided = freqs == n_fft_ / 2 + 1 && freqs != n_fft_;
        const int64_t lanes = mode_ == 0 ? 2 : 1;
        float* out = y.data<float>();
        float* weight = ctx.scratch_as<float>(0);
        std::fill_n(out, y.numel(), 0.f);
        std::fill_n(weight, length, 0.f);
        // Bin k of frame t: stored, or the conjugate of bin n_fft - k for a onesided input.
        auto bin = [&](int64_t k, int64_t t, double& re, double& im) {
            const bool mirrored = onesided && k >= freqs;
            const float* p = spec.data<float>() + ((mirrored ? n_fft_ - k : k) * frames + t) * 2;
            re = p[0] / norm_;
            im = mirrored ? -p[1] / norm_ : p[1] / norm_;
        };
        for (int64_t t = 0; t < frames; ++t)
            for (int64_t i = 0; i < n_fft_; ++i) {
                const int64_t at = t * hop_ + i - (center_ ? n_fft_ / 2 : 0);
                if (at < 0 || at >= length) continue;
                double re, im;
                signal::dft_bin(twiddles_, i, n_fft_, 1.0, [&](int64_t k, double& br, double& bi) { bin(k, t, br, bi); },
                                re, im);
                const double w = window_[static_cast<size_t>(i)];
                re = re / n_fft_ * w, im = im / n_fft_ * w;
                weight[at] += static_cast<float>(w * w);
                if (mode_ == 0) {
                    out[at * 2] += static_cast<float>(re);
                    out[at * 2 + 1] += static_cast<float>(im);
                } else {
                    out[at] += static_cast<float>(mode_ == 1 ? re : im);
                }
            }
        for (int64_t i = 0; i < length; ++i)
            if (weight[i] != 0.f)
                for (int64_t l = 0; l < lanes; ++l) out[i * lanes + l] /= weight[i];
    }

    bool inverse_;
    int n_fft_ = 0, mode_ = 0, hop_ = 1, pad_type_ = 2, normalized_ = 0;
    bool center_ = true, onesided_ = true;
    std::vector<float> window_;
    signal::Twiddles twiddles_{1};
    double norm_ = 1.0;
};

} // namespace

std::unique_ptr<Op> make_spectrogram() { return std::make_unique<Spectrogram>(false); }
std::unique_ptr<Op> make_inverse_spectrogram() { return std::make_unique<Spectrogram>(true); }

} // namespace kestrel
