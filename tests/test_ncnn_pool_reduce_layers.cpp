// ncnn's Pooling1D, Pooling3D, SPP, CumulativeSum and StatisticsPooling
// against references written here from ncnn's loops (src/layer/*.cpp).
#include <gtest/gtest.h>

#include <array>
#include <cfloat>
#include <cmath>

#include "layer_test_util.h"

namespace kestrel {
namespace {

using namespace layer_test;

// ncnn's windows along one axis of size n: pads after pad_mode, output size,
// and the positions an average counts.
struct AxisWindows {
    int64_t pad_begin, out, count_begin, count_end;
};

AxisWindows ncnn_axis(int64_t n, int k, int s, int pb, int pe, int pad_mode, bool include_pad)
{
    int64_t b = pb, e = pe;
    if (pad_mode == 0) {
        const int64_t tail = (n + b + e - k) % s;
        if (tail) e += s - tail;
    } else if (pad_mode >= 2) {
        const int64_t pad = std::max<int64_t>(0, k + (n - 1) / s * s - n);
        b = pad_mode == 2 ? pad / 2 : pad - pad / 2;
        e = pad - b;
    }
    AxisWindows a{b, (n + b + e - k) / s + 1, 0, n};
    if (include_pad) a.count_begin = -b, a.count_end = n + e;
    else if (pad_mode >= 2) a.count_begin = pb - b, a.count_end = n + e - pe;
    return a;
}

// Reference pooling of x (c, spatial...) with per-axis (k, s, pb, pe).
std::vector<double> pool_reference(const Tensor& x, const std::vector<std::array<int, 4>>& p, int type, int pad_mode,
                                   bool include_pad, Shape& out_shape)
{
    const Shape& s = x.shape();
    const size_t r = s.size() - 1;
    std::vector<AxisWindows> ax;
    out_shape = {s[0]};
    for (size_t k = 0; k < r; ++k) {
        ax.push_back(ncnn_axis(s[k + 1], p[k][0], p[k][1], p[k][2], p[k][3], pad_mode, include_pad));
        out_shape.push_back(ax.back().out);
    }
    std::vector<double> y;
    for (int64_t o = 0; o < shape_numel(out_shape); ++o) {
        const std::vector<int64_t> oc = coords(out_shape, o);
        double best = -FLT_MAX, sum = 0;
        int64_t counted = 0, taps = 1;
        for (size_t k = 0; k < r; ++k) taps *= p[k][0];
        for (int64_t t = 0; t < taps; ++t) {
            int64_t rest = t;
            std::vector<int64_t> at = {oc[0]};
            bool inside = true, count = true;
            std::vector<int64_t> pos(r);
            for (size_t k = r; k-- > 0;) {
                const int64_t tap = rest % p[k][0];
                rest /= p[k][0];
                pos[k] = oc[k + 1] * p[k][1] + tap - ax[k].pad_begin;
            }
            for (size_t k = 0; k < r; ++k) {
                inside = inside && pos[k] >= 0 && pos[k] < s[k + 1];
                count = count && pos[k] >= ax[k].count_begin && pos[k] < ax[k].count_end;
                at.push_back(pos[k]);
            }
            const double v = inside ? x.data<float>()[linear(s, at)] : (type == 0 ? -FLT_MAX : 0.0);
            best = std::max(best, v);
            sum += v;
            counted += count ? 1 : 0;
        }
        y.push_back(type == 0 ? best : (counted ? sum / static_cast<double>(counted) : 0.0));
    }
    return y;
}

TEST(NcnnPool, Pooling1DAndPooling3D)
{
    for (int type : {0, 1})
        for (int pad_mode : {0, 1, 2, 3})
            for (bool include_pad : {false, true}) {
                const std::string what = "type " + std::to_string(type) + " pad_mode " + std::to_string(pad_mode) +
                                         (include_pad ? " include_pad" : "");
                // 1-D: kernel 3, stride 2, pads 1/0.
                const Tensor x1 = random_f32({3, 10}, 30);
                ParamDict p1 = P({{0, type}, {1, 3}, {2, 2}, {3, 1}, {14, 0}, {5, pad_mode}, {6, include_pad ? 1 : 0}});
                Shape s1;
                const auto want1 = pool_reference(x1, {{3, 2, 1, 0}}, type, pad_mode, include_pad, s1);
                const Tensor y1 = run1("Pooling1D", p1, {R(x1)});
                EXPECT_EQ(y1.shape(), s1) << what;
                expect_near_all(y1, want1, "Pooling1D " + what);
                // 3-D: kernels d2 h3 w2, strides d1 h2 w2, pads front 1 behind 0, top 1 bottom 1, left 0 right 1.
                const Tensor x3 = random_f32({2, 4, 7, 6}, 31);
                ParamDict p3 = P({{0, type}, {1, 2}, {11, 3}, {21, 2}, {2, 2}, {12, 2}, {22, 1}, {3, 0}, {14, 1},
                                  {13, 1}, {15, 1}, {23, 1}, {16, 0}, {5, pad_mode}, {6, include_pad ? 1 : 0}});
                Shape s3;
                const auto want3 = pool_reference(x3, {{2, 1, 1, 0}, {3, 2, 1, 1}, {2, 2, 0, 1}}, type, pad_mode,
                                                  include_pad, s3);
                const Tensor y3 = run1("Pooling3D", p3, {R(x3)});
                EXPECT_EQ(y3.shape(), s3) << what;
                expect_near_all(y3, want3, "Pooling3D " + what);
            }
}

TEST(NcnnPool, GlobalAndAdaptive1DAnd3D)
{
    const Tensor x1 = random_f32({3, 10}, 32), x3 = random_f32({2, 4, 5, 6}, 33);
    for (int type : {0, 1}) {
        // Global: one value per channel.
        for (const Tensor* x : {&x1, &x3}) {
            const int64_t c = x->dim(0), n = x->numel() / c;
            std::vector<double> want;
            for (int64_t q = 0; q < c; ++q) {
                double best = -FLT_MAX, sum = 0;
                for (int64_t i = 0; i < n; ++i) {
                    best = std::max<double>(best, x->data<float>()[q * n + i]);
                    sum += x->data<float>()[q * n + i];
                }
                want.push_back(type == 0 ? best : sum / static_cast<double>(n));
            }
            const Tensor y = run1(x->rank() == 2 ? "Pooling1D" : "Pooling3D", P({{0, type}, {4, 1}}), {R(*x)});
            EXPECT_EQ(y.shape(), Shape({c}));
            expect_near_all(y, want, "global");
        }
        // Adaptive 3-D to (2, 3, 4): output i of n covers [floor(i n / o), ceil((i + 1) n / o)).
        const Tensor y = run1("Pooling3D", P({{0, type}, {7, 1}, {8, 4}, {18, 3}, {28, 2}}), {R(x3)});
        ASSERT_EQ(y.shape(), Shape({2, 2, 3, 4}));
        for (int64_t o = 0; o < y.numel(); ++o) {
            const std::vector<int64_t> oc = coords(y.shape(), o);
            double best = -FLT_MAX, sum = 0;
            int64_t count = 0;
            for (int64_t i = 0; i < x3.numel(); ++i) {
                const std::vector<int64_t> c = coords(x3.shape(), i);
                bool in = c[0] == oc[0];
                for (size_t k = 1; k < 4; ++k) {
                    const int64_t n = x3.dim(static_cast<int>(k)), on = y.dim(static_cast<int>(k));
                    in = in && c[k] >= n * oc[k] / on && c[k] < (n * (oc[k] + 1) + on - 1) / on;
                }
                if (!in) continue;
                best = std::max<double>(best, x3.data<float>()[i]);
                sum += x3.data<float>()[i];
                ++count;
            }
            const double want = type == 0 ? best : sum / static_cast<double>(count);
            ASSERT_NEAR(y.data<float>()[o], want, 1e-5 * std::max(1.0, std::fabs(want)));
        }
    }
    EXPECT_TRUE(contains(error_of([&] { run1("Pooling3D", P({{1, 2}}), {R(x1)}); }), "(c,d,h,w)"));
    EXPECT_TRUE(contains(error_of([&] { run1("Pooling1D", P({{1, 0}}), {R(x1)}); }), "kernel_w"));
}

TEST(NcnnPool, SpatialPyramidPooling)
{
    const Tensor x = random_f32({3, 5, 7}, 34);
    for (int type : {0, 1}) {
        const Tensor y = run1("SPP", P({{0, type}, {1, 3}}), {R(x)});
        std::vector<double> want;
        for (int p = 0; p < 3; ++p) {
            const int bins = 1 << p;
            const int kh = (5 + bins - 1) / bins, kw = (7 + bins - 1) / bins;
            const int ph = (kh * bins - 5 + 1) / 2, pw = (kw * bins - 7 + 1) / 2;
            for (int q = 0; q < 3; ++q)
                for (int i = 0; i < bins; ++i)
                    for (int j = 0; j < bins; ++j) {
                        double best = -FLT_MAX, sum = 0;
                        for (int a = 0; a < kh; ++a)
                            for (int b = 0; b < kw; ++b) {
                                const int r = i * kh + a - ph, c = j * kw + b - pw;
                                const double v = r >= 0 && r < 5 && c >= 0 && c < 7 ? x.data<float>()[(q * 5 + r) * 7 + c] : 0.0;
                                best = std::max(best, v);
                                sum += v;
                            }
                        want.push_back(type == 0 ? best : sum / (kh * kw));
                    }
        }
        EXPECT_EQ(y.shape(), Shape({3 * 21}));
        expect_near_all(y, want, "SPP type " + std::to_string(type));
    }
}

TEST(NcnnReduce, CumulativeSumEveryAxis)
{
    for (const Shape& s : {Shape{6}, Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 2, 3, 2}})
        for (int axis = -1; axis < static_cast<int>(s.size()); ++axis) {
            const Tensor x = random_f32(s, 35);
            const Tensor y = run1("CumulativeSum", P({{0, axis}}), {R(x)});
            const size_t a = s.size() == 1 ? 0 : static_cast<size_t>(axis < 0 ? axis + static_cast<int>(s.size()) : axis);
            std::vector<double> want;
            for (int64_t i = 0; i < x.numel(); ++i) {
                std::vector<int64_t> c = coords(s, i);
                const int64_t last = c[a];
                double sum = 0;
                for (c[a] = 0; c[a] <= last; ++c[a]) sum += x.data<float>()[linear(s, c)];
                want.push_back(sum);
            }
            expect_near_all(y, want, "CumulativeSum " + shape_str(s) + " axis " + std::to_string(axis));
        }
    EXPECT_TRUE(contains(error_of([] { run1("CumulativeSum", P({{0, 2}}), {R(random_f32({2, 3}, 1))}); }), "axis"));
}

TEST(NcnnReduce, StatisticsPooling)
{
    for (const Shape& s : {Shape{3, 8}, Shape{4, 3, 5}, Shape{2, 2, 3, 2}}) {
        const Tensor x = random_f32(s, 36, -1.f, 3.f);
        const int64_t c = s.size() >= 3 ? s[0] : 1, n = x.numel() / c;
        std::vector<double> mean, stddev;
        for (int64_t q = 0; q < c; ++q) {
            double sum = 0, sq = 0;
            for (int64_t i = 0; i < n; ++i) sum += x.data<float>()[q * n + i];
            const double m = sum / static_cast<double>(n);
            for (int64_t i = 0; i < n; ++i) sq += std::pow(x.data<float>()[q * n + i] - m, 2);
            mean.push_back(m);
            stddev.push_back(std::sqrt(sq / static_cast<double>(n)));
        }
        expect_near_all(run1("StatisticsPooling", P({}), {R(x)}), mean, "mean " + shape_str(s));
        std::vector<double> both = mean;
        both.insert(both.end(), stddev.begin(), stddev.end());
        expect_near_all(run1("StatisticsPooling", P({{0, 1}}), {R(x)}), both, "mean+std " + shape_str(s));
    }
}

} // namespace
} // namespace kestrel
