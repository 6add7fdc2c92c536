// ncnn's DeformableConv2D, RotaryEmbed, Spectrogram and InverseSpectrogram
// against references written here from their formulas (ncnn's loops,
// torch.stft/istft's definitions), and the properties that pin them down:
// zero offsets are a plain Convolution, istft(stft(x)) is x.
#include <gtest/gtest.h>

#include <cmath>

#include "layer_test_util.h"

namespace kestrel {
namespace {

using namespace layer_test;

constexpr double kPi = 3.14159265358979323846;

// torchvision's deform_conv2d for one image, written out.
std::vector<double> deformable_reference(const Tensor& x, const Tensor& off, const Tensor* mask, const Tensor& w,
                                         const Tensor& b, int kh, int kw, int stride, int pad, int dil, int64_t oh,
                                         int64_t ow)
{
    const int64_t c = x.dim(0), h = x.dim(1), wd = x.dim(2), m = w.numel() / (c * kh * kw);
    auto pixel = [&](int64_t ch, int64_t yy, int64_t xx) -> double {
        return yy < 0 || yy >= h || xx < 0 || xx >= wd ? 0.0 : x.data<float>()[(ch * h + yy) * wd + xx];
    };
    std::vector<double> y;
    for (int64_t oc = 0; oc < m; ++oc)
        for (int64_t oy = 0; oy < oh; ++oy)
            for (int64_t ox = 0; ox < ow; ++ox) {
                double sum = b.data<float>()[oc];
                for (int i = 0; i < kh; ++i)
                    for (int j = 0; j < kw; ++j) {
                        const int64_t tap = i * kw + j, at = oy * ow + ox;
                        const double py = oy * stride - pad + i * dil + off.data<float>()[(2 * tap) * oh * ow + at];
                        const double px = ox * stride - pad + j * dil + off.data<float>()[(2 * tap + 1) * oh * ow + at];
                        const double mk = mask ? mask->data<float>()[tap * oh * ow + at] : 1.0;
                        for (int64_t ch = 0; ch < c; ++ch) {
                            double v = 0;
                            if (py > -1 && px > -1 && py < h && px < wd) {
                                const int64_t y0 = static_cast<int64_t>(std::floor(py)), x0 = static_cast<int64_t>(std::floor(px));
                                const double ly = py - y0, lx = px - x0;
                                v = (1 - ly) * (1 - lx) * pixel(ch, y0, x0) + (1 - ly) * lx * pixel(ch, y0, x0 + 1) +
                                    ly * (1 - lx) * pixel(ch, y0 + 1, x0) + ly * lx * pixel(ch, y0 + 1, x0 + 1);
                            }
                            sum += v * mk * w.data<float>()[((oc * c + ch) * kh + i) * kw + j];
                        }
                    }
                y.push_back(sum);
            }
    return y;
}

TEST(NcnnConv, DeformableConv2D)
{
    const Tensor x = random_f32({3, 7, 8}, 50);
    const int m = 4, kh = 3, kw = 2, stride = 2, pad = 1, dil = 1;
    const Tensor w = random_f32({m * 3 * kh * kw}, 51), b = random_f32({m}, 52);
    const int64_t oh = (7 + 2 - 3) / 2 + 1, ow = (8 + 2 - 2) / 2 + 1;
    ParamDict pd = P({{0, m}, {1, kw}, {11, kh}, {3, stride}, {4, pad}, {5, 1}, {6, m * 3 * kh * kw}});
    const Tensor off = random_f32({2 * kh * kw, oh, ow}, 53, -1.5f, 1.5f);
    const Tensor mask = random_f32({kh * kw, oh, ow}, 54, 0.f, 1.f);
    const Tensor y = run1("DeformableConv2D", pd, {R(x), R(off), R(mask)}, {w, b});
    EXPECT_EQ(y.shape(), Shape({m, oh, ow}));
    expect_near_all(y, deformable_reference(x, off, &mask, w, b, kh, kw, stride, pad, dil, oh, ow), "with mask");
    const Tensor y2 = run1("DeformableConv2D", pd, {R(x), R(off)}, {w, b});
    expect_near_all(y2, deformable_reference(x, off, nullptr, w, b, kh, kw, stride, pad, dil, oh, ow), "no mask");
    // Zero offsets and no mask: the Convolution of the same params.
    Tensor zero({2 * kh * kw, oh, ow});
    std::fill_n(zero.data<float>(), zero.numel(), 0.f);
    const Tensor conv = run1("Convolution", pd, {R(x)}, {w, b});
    const Tensor deform = run1("DeformableConv2D", pd, {R(x), R(zero)}, {w, b});
    std::vector<double> want;
    for (float v : values<float>(conv)) want.push_back(v);
    expect_near_all(deform, want, "zero offsets");
    EXPECT_TRUE(contains(error_of([&] { run1("DeformableConv2D", pd, {R(x), R(random_f32({5, oh, ow}, 1))}, {w, b}); }),
                         "offsets (input 1)"));
}

TEST(NcnnAttention, RotaryEmbedBothLayouts)
{
    for (const Shape& s : {Shape{3, 5, 8}, Shape{5, 6}}) {
        const Tensor x = random_f32(s, 55);
        const int64_t seq = s[s.size() - 2], dim = s.back(), half = dim / 2;
        Tensor cos({seq, half}), sin({seq, half});
        for (int64_t t = 0; t < seq; ++t)
            for (int64_t j = 0; j < half; ++j) {
                const double angle = t / std::pow(10000.0, 2.0 * j / dim);
                cos.data<float>()[t * half + j] = static_cast<float>(std::cos(angle));
                sin.data<float>()[t * half + j] = static_cast<float>(std::sin(angle));
            }
        for (int interleaved : {0, 1}) {
            const Tensor y = run1("RotaryEmbed", P({{0, interleaved}}), {R(x), R(cos), R(sin)});
            std::vector<double> want(static_cast<size_t>(x.numel()));
            for (int64_t r = 0; r < x.numel() / dim; ++r)
                for (int64_t j = 0; j < half; ++j) {
                    const int64_t i0 = interleaved ? 2 * j : j, i1 = interleaved ? 2 * j + 1 : j + half;
                    const double a = x.data<float>()[r * dim + i0], bb = x.data<float>()[r * dim + i1];
                    const double c = cos.data<float>()[r % seq * half + j], sn = sin.data<float>()[r % seq * half + j];
                    want[static_cast<size_t>(r * dim + i0)] = a * c - bb * sn;
                    want[static_cast<size_t>(r * dim + i1)] = a * sn + bb * c;
                }
            expect_near_all(y, want, "RotaryEmbed " + shape_str(s) + " interleaved " + std::to_string(interleaved));
        }
    }
    EXPECT_TRUE(contains(error_of([] {
        run1("RotaryEmbed", P({}), {R(random_f32({5, 6}, 1)), R(random_f32({5, 2}, 2)), R(random_f32({5, 3}, 3))});
    }), "cos"));
}

// The window ncnn builds: winlen values (periodic) centred in n_fft.
std::vector<double> window_of(int n_fft, int winlen, int type)
{
    std::vector<double> w(static_cast<size_t>(n_fft), 0.0);
    for (int i = 0; i < winlen; ++i) {
        const double x = 2 * kPi * i / winlen;
        w[static_cast<size_t>((n_fft - winlen) / 2 + i)] = type == 0 ? 1.0 : type == 1 ? 0.5 - 0.5 * std::cos(x) : 0.54 - 0.46 * std::cos(x);
    }
    return w;
}

TEST(NcnnSignal, SpectrogramMatchesADirectDft)
{
    const int n_fft = 8, hop = 3;
    const Tensor x = random_f32({21}, 56);
    for (int window_type : {0, 1, 2})
        for (int center : {0, 1})
            for (int pad_type : {0, 1, 2})
                for (int normalized : {0, 1, 2})
                    for (int onesided : {0, 1})
                        for (int power : {0, 1, 2}) {
                            if (!center && pad_type) continue;
                            ParamDict pd = P({{0, n_fft}, {1, power}, {2, hop}, {3, 6}, {4, window_type}, {5, center},
                                              {6, pad_type}, {7, normalized}, {8, onesided}});
                            const Tensor y = run1("Spectrogram", pd, {R(x)});
                            // The padded signal, numpy's constant/edge/reflect.
                            std::vector<double> s;
                            const int p = center ? n_fft / 2 : 0;
                            for (int i = -p; i < 21 + p; ++i) {
                                int j = i;
                                if (i < 0 || i >= 21) {
                                    if (pad_type == 0) {
                                        s.push_back(0);
                                        continue;
                                    }
                                    j = pad_type == 1 ? (i < 0 ? 0 : 20) : (i < 0 ? -i : 40 - i);
                                }
                                s.push_back(x.data<float>()[j]);
                            }
                            const std::vector<double> win = window_of(n_fft, 6, window_type);
                            double sq = 0;
                            for (double v : win) sq += v * v;
                            const double norm = normalized == 1 ? 1 / std::sqrt(n_fft) : normalized == 2 ? 1 / std::sqrt(sq) : 1;
                            const int frames = (static_cast<int>(s.size()) - n_fft) / hop + 1;
                            const int freqs = onesided ? n_fft / 2 + 1 : n_fft;
                            std::vector<double> want;
                            for (int f = 0; f < freqs; ++f)
                                for (int t = 0; t < frames; ++t) {
                                    double re = 0, im = 0;
                                    for (int k = 0; k < n_fft; ++k) {
                                        re += s[t * hop + k] * win[k] * std::cos(2 * kPi * f * k / n_fft);
                                        im -= s[t * hop + k] * win[k] * std::sin(2 * kPi * f * k / n_fft);
                                    }
                                    re *= norm, im *= norm;
                                    if (power == 0) want.insert(want.end(), {re, im});
                                    else want.push_back(power == 1 ? std::hypot(re, im) : re * re + im * im);
                                }
                            const std::string what = "window " + std::to_string(window_type) + " center " +
                                                     std::to_string(center) + " pad " + std::to_string(pad_type) +
                                                     " normalized " + std::to_string(normalized) + " onesided " +
                                                     std::to_string(onesided) + " power " + std::to_string(power);
                            EXPECT_EQ(y.dim(1), frames) << what;
                            expect_near_all(y, want, what, 1e-4);
                        }
}

TEST(NcnnSignal, InverseSpectrogramInvertsTheSpectrogram)
{
    // Hann windows at a quarter hop overlap-add to a constant: istft(stft(x))
    // gives x back, both onesided and full, every normalization.
    const int n_fft = 16, hop = 4;
    const Tensor x = random_f32({64}, 57);
    for (int onesided : {0, 1})
        for (int normalized : {0, 1, 2})
            for (int center : {1, 0}) {
                ParamDict pd = P({{0, n_fft}, {2, hop}, {4, 1}, {5, center}, {7, normalized}, {8, onesided}});
                const Tensor spec = run1("Spectrogram", pd, {R(x)});
                ParamDict inv = P({{0, n_fft}, {1, 1}, {2, hop}, {4, 1}, {5, center}, {7, normalized}});
                const Tensor back = run1("InverseSpectrogram", inv, {R(spec)});
                const int64_t frames = spec.dim(1);
                const int64_t length = center ? (frames - 1) * hop : (frames - 1) * hop + n_fft;
                ASSERT_EQ(back.shape(), Shape({length}));
                // Samples covered by at least two windows with nonzero weight.
                for (int64_t i = hop; i < length - hop; ++i) {
                    const double want = x.data<float>()[i];
                    ASSERT_NEAR(back.data<float>()[i], want, 1e-4) << "onesided " << onesided << " normalized "
                                                                    << normalized << " center " << center << " at " << i;
                }
                ParamDict complex = inv;
                complex.set_int(1, 0);
                const Tensor both = run1("InverseSpectrogram", complex, {R(spec)});
                ASSERT_EQ(both.shape(), Shape({length, 2}));
                for (int64_t i = hop; i < length - hop; ++i) {
                    ASSERT_NEAR(both.data<float>()[2 * i], x.data<float>()[i], 1e-4);
                    ASSERT_NEAR(both.data<float>()[2 * i + 1], 0.0, 1e-4); // a real signal's spectrum
                }
            }
    EXPECT_TRUE(contains(error_of([] { run1("InverseSpectrogram", P({{0, 8}}), {R(random_f32({4, 3, 2}, 1))}); }),
                         "freqs"));
}

} // namespace
} // namespace kestrel
