// ncnn's data-movement layers (Flip, PixelShuffle, Reorg, CopyTo, DeepCopy,
// Diag, Packing, Unfold, Fold, Embed) and GLU against references written here
// from ncnn's loops: exact for moved values, 1e-5 relative for GLU.
#include <gtest/gtest.h>

#include <cmath>

#include "layer_test_util.h"

namespace kestrel {
namespace {

using namespace layer_test;

// Row-major index helpers.
int64_t at3(const Shape& s, int64_t a, int64_t b, int64_t c) { return (a * s[1] + b) * s[2] + c; }

TEST(NcnnShape, Flip)
{
    for (const Shape& s : {Shape{5}, Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 2, 3, 2}})
        for (const std::vector<int>& axes : {std::vector<int>{0}, {-1}, {0, -1}, {1}}) {
            if (axes == std::vector<int>{1} && s.size() < 2) continue;
            const Tensor x = random_f32(s, 3);
            const Tensor y = run1("Flip", with_ints(P({}), 0, axes), {R(x)});
            ASSERT_EQ(y.shape(), s);
            for (int64_t i = 0; i < x.numel(); ++i) {
                std::vector<int64_t> c = coords(s, i);
                std::vector<bool> flipped(s.size(), false); // an axis named twice flips once, as ncnn
                for (int a : axes) flipped[static_cast<size_t>(a < 0 ? a + static_cast<int>(s.size()) : a)] = true;
                for (size_t k = 0; k < s.size(); ++k)
                    if (flipped[k]) c[k] = s[k] - 1 - c[k];
                ASSERT_EQ(y.data<float>()[i], x.data<float>()[linear(s, c)]) << shape_str(s);
            }
        }
    // Any dtype; out-of-range axes are errors.
    EXPECT_EQ(values<int64_t>(run1("Flip", with_ints(P({}), 0, {0}), {R(i64v({1, 2, 3}))})), std::vector<int64_t>({3, 2, 1}));
    EXPECT_TRUE(contains(error_of([] { run1("Flip", with_ints(P({}), 0, {2}), {R(random_f32({2, 3}, 1))}); }), "axis"));
}

TEST(NcnnShape, PixelShuffleBothModes)
{
    const int b = 2;
    const Shape s = {8, 3, 4};
    const Tensor x = random_f32(s, 4);
    for (int mode : {0, 1}) {
        const Tensor y = run1("PixelShuffle", P({{0, b}, {1, mode}}), {R(x)});
        const int64_t outc = 2;
        ASSERT_EQ(y.shape(), Shape({outc, 6, 8}));
        for (int64_t p = 0; p < outc; ++p)
            for (int64_t sh = 0; sh < b; ++sh)
                for (int64_t sw = 0; sw < b; ++sw) {
                    const int64_t q = mode == 0 ? p * b * b + sh * b + sw : (sh * b + sw) * outc + p;
                    for (int64_t i = 0; i < 3; ++i)
                        for (int64_t j = 0; j < 4; ++j)
                            ASSERT_EQ(y.data<float>()[at3(y.shape(), p, i * b + sh, j * b + sw)],
                                      x.data<float>()[at3(s, q, i, j)]);
                }
    }
    EXPECT_TRUE(contains(error_of([&] { run1("PixelShuffle", P({{0, 3}}), {R(x)}); }), "upscale_factor"));
}

TEST(NcnnShape, ReorgBothModesDropsRemainders)
{
    const int b = 2;
    const Shape s = {3, 5, 7}; // 5 and 7 are not multiples of 2: the last row and column are dropped
    const Tensor x = random_f32(s, 5);
    for (int mode : {0, 1}) {
        const Tensor y = run1("Reorg", P({{0, b}, {1, mode}}), {R(x)});
        ASSERT_EQ(y.shape(), Shape({12, 2, 3}));
        for (int64_t q = 0; q < 3; ++q)
            for (int64_t sh = 0; sh < b; ++sh)
                for (int64_t sw = 0; sw < b; ++sw) {
                    const int64_t p = mode == 0 ? q * b * b + sh * b + sw : (sh * b + sw) * 3 + q;
                    for (int64_t i = 0; i < 2; ++i)
                        for (int64_t j = 0; j < 3; ++j)
                            ASSERT_EQ(y.data<float>()[at3(y.shape(), p, i, j)],
                                      x.data<float>()[at3(s, q, i * b + sh, j * b + sw)]);
                }
    }
}

TEST(NcnnShape, CopyToOffsetsAndStarts)
{
    const Tensor self = random_f32({3, 4, 5}, 6);
    const Tensor src = random_f32({2, 2, 3}, 7);
    auto expect_copied = [&](const Tensor& y, int64_t c0, int64_t h0, int64_t w0) {
        ASSERT_EQ(y.shape(), self.shape());
        for (int64_t i = 0; i < self.numel(); ++i) {
            const std::vector<int64_t> c = coords(self.shape(), i);
            const bool inside = c[0] >= c0 && c[0] < c0 + 2 && c[1] >= h0 && c[1] < h0 + 2 && c[2] >= w0 && c[2] < w0 + 3;
            const float want = inside ? src.data<float>()[linear(src.shape(), {c[0] - c0, c[1] - h0, c[2] - w0})]
                                      : self.data<float>()[i];
            ASSERT_EQ(y.data<float>()[i], want) << i;
        }
    };
    expect_copied(run1("CopyTo", P({{0, 2}, {1, 1}, {2, 1}}), {R(self), R(src)}), 1, 1, 2);
    ParamDict numpy = with_ints(with_ints(P({}), 9, {-3, 1}), 11, {-1, 0});
    expect_copied(run1("CopyTo", numpy, {R(self), R(src)}), 1, 0, 2);
    // Same shape: input 1 is the output.
    const Tensor same = random_f32({3, 4, 5}, 8);
    EXPECT_EQ(values<float>(run1("CopyTo", P({}), {R(self), R(same)})), values<float>(same));
    EXPECT_TRUE(contains(error_of([&] { run1("CopyTo", P({{0, 4}}), {R(self), R(src)}); }), "does not fit"));
}

TEST(NcnnShape, DeepCopyAndPacking)
{
    const Tensor x = random_f32({2, 3, 4}, 9);
    EXPECT_EQ(values<float>(run1("DeepCopy", P({}), {R(x)})), values<float>(x));
    EXPECT_EQ(values<float>(run1("Packing", P({{0, 16}, {2, 1}, {3, 1}}), {R(x)})), values<float>(x));
    EXPECT_TRUE(contains(error_of([&] { run1("Packing", P({{0, 3}}), {R(x)}); }), "out_elempack"));
}

TEST(NcnnShape, Diag)
{
    const Tensor v = random_f32({3}, 10);
    for (int k : {0, 2, -1}) {
        const Tensor m = run1("Diag", P({{0, k}}), {R(v)});
        const int64_t n = 3 + std::abs(k);
        ASSERT_EQ(m.shape(), Shape({n, n}));
        for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < n; ++c) {
                const int64_t i = c - std::max(k, 0);
                const bool on = c - r == k && i >= 0 && i < 3;
                ASSERT_EQ(m.data<float>()[r * n + c], on ? v.data<float>()[i] : 0.f) << k;
            }
    }
    const Tensor a = random_f32({3, 5}, 11);
    for (int k : {0, 1, 3, -1, -2, 5, -3}) {
        std::vector<float> want;
        for (int64_t r = 0; r < 3; ++r)
            if (r + k >= 0 && r + k < 5) want.push_back(a.data<float>()[r * 5 + r + k]);
        const Tensor d = run1("Diag", P({{0, k}}), {R(a)});
        EXPECT_EQ(values<float>(d), want) << k;
    }
}

TEST(NcnnShape, GluAlongEachAxis)
{
    struct Case {
        Shape s;
        int axis;
    };
    for (const Case& c : std::vector<Case>{{{8}, 0}, {{4, 6}, 0}, {{4, 6}, 1}, {{2, 4, 6}, 0}, {{2, 4, 6}, 1},
                                           {{2, 4, 6}, -1}, {{2, 2, 4, 2}, 2}}) {
        const Tensor x = random_f32(c.s, 12);
        const Tensor y = run1("GLU", P({{0, c.axis}}), {R(x)});
        const size_t a = static_cast<size_t>(c.axis < 0 ? c.axis + static_cast<int>(c.s.size()) : c.axis);
        Shape half = c.s;
        half[a] /= 2;
        ASSERT_EQ(y.shape(), half);
        for (int64_t i = 0; i < y.numel(); ++i) {
            std::vector<int64_t> k = coords(half, i);
            const double first = x.data<float>()[linear(c.s, k)];
            k[a] += half[a];
            const double second = x.data<float>()[linear(c.s, k)];
            const double want = first / (1 + std::exp(-second));
            ASSERT_NEAR(y.data<float>()[i], want, 1e-5 * std::max(1.0, std::fabs(want)));
        }
    }
    EXPECT_TRUE(contains(error_of([] { run1("GLU", P({{0, 1}}), {R(random_f32({2, 3}, 1))}); }), "even"));
}

} // namespace
} // namespace kestrel

namespace kestrel {
namespace {

using namespace layer_test;

// torch.nn.Unfold written out: row (c, u, v), column (i, j).
std::vector<float> unfold_reference(const Tensor& x, int kh, int kw, int dh, int dw, int sh, int sw, int pt, int pb,
                                    int pl, int pr, float pad, int64_t& oh, int64_t& ow)
{
    const int64_t c = x.dim(0), h = x.dim(1), w = x.dim(2);
    oh = (h + pt + pb - dh * (kh - 1) - 1) / sh + 1;
    ow = (w + pl + pr - dw * (kw - 1) - 1) / sw + 1;
    std::vector<float> y;
    for (int64_t ch = 0; ch < c; ++ch)
        for (int u = 0; u < kh; ++u)
            for (int v = 0; v < kw; ++v)
                for (int64_t i = 0; i < oh; ++i)
                    for (int64_t j = 0; j < ow; ++j) {
                        const int64_t r = i * sh + u * dh - pt, q = j * sw + v * dw - pl;
                        y.push_back(r >= 0 && r < h && q >= 0 && q < w ? x.data<float>()[(ch * h + r) * w + q] : pad);
                    }
    return y;
}

TEST(NcnnShape, UnfoldAndFold)
{
    const Tensor x = random_f32({2, 7, 6}, 20);
    // kernel 3x2, dilation 2x1, stride 1x2, pads top 1 bottom 2 left 1 right 0, pad value 0.5.
    ParamDict pd = P({{1, 2}, {11, 3}, {2, 1}, {12, 2}, {3, 2}, {13, 1}, {4, 1}, {15, 0}, {14, 1}, {16, 2}});
    pd.set_float(18, 0.5f);
    int64_t oh = 0, ow = 0;
    const std::vector<float> want = unfold_reference(x, 3, 2, 2, 1, 1, 2, 1, 2, 1, 0, 0.5f, oh, ow);
    const Tensor cols = run1("Unfold", pd, {R(x)});
    ASSERT_EQ(cols.shape(), Shape({2 * 6, oh * ow}));
    EXPECT_EQ(values<float>(cols), want);
    // Fold is Unfold's adjoint: <Unfold(x), c> == <x, Fold(c)> for any c.
    ParamDict fold = pd;
    fold.set_int(20, 6);
    fold.set_int(21, 7);
    const Tensor c = random_f32(cols.shape(), 21);
    const Tensor folded = run1("Fold", fold, {R(c)});
    ASSERT_EQ(folded.shape(), x.shape());
    ParamDict zero_pad = pd;
    zero_pad.set_float(18, 0.f);
    const Tensor unfolded = run1("Unfold", zero_pad, {R(x)});
    double lhs = 0, rhs = 0;
    for (int64_t i = 0; i < c.numel(); ++i) lhs += static_cast<double>(unfolded.data<float>()[i]) * c.data<float>()[i];
    for (int64_t i = 0; i < x.numel(); ++i) rhs += static_cast<double>(x.data<float>()[i]) * folded.data<float>()[i];
    EXPECT_NEAR(lhs, rhs, 1e-4 * std::max(1.0, std::fabs(lhs)));
    // SAME padding for Unfold: out = ceil(in / stride).
    const Tensor same = run1("Unfold", P({{1, 3}, {3, 2}, {4, -233}}), {R(x)});
    EXPECT_EQ(same.shape(), Shape({2 * 9, 4 * 3}));
    EXPECT_TRUE(contains(error_of([&] { run1("Fold", P({{1, 2}, {20, 5}, {21, 5}}), {R(c)}); }), "windows"));
    EXPECT_TRUE(contains(error_of([&] { run1("Unfold", P({{1, 0}}), {R(x)}); }), "kernel_w"));
}

TEST(NcnnShape, EmbedRowsBiasClampAndInt8)
{
    const int dim = 5, out = 3;
    const Tensor table = random_f32({dim * out}, 22), bias = random_f32({out}, 23);
    ParamDict pd = P({{0, out}, {1, dim}, {2, 1}, {3, dim * out}});
    const Tensor words = make<int32_t>({5}, DType::I32, {2, 0, 4, -3, 9}); // -3 and 9 clamp to 0 and 4
    const Tensor y = run1("Embed", pd, {R(words)}, {table, bias});
    ASSERT_EQ(y.shape(), Shape({5, out}));
    const int rows[5] = {2, 0, 4, 0, 4};
    for (int q = 0; q < 5; ++q)
        for (int p = 0; p < out; ++p)
            EXPECT_EQ(y.data<float>()[q * out + p], table.data<float>()[rows[q] * out + p] + bias.data<float>()[p]);
    // An int8 table with its scale: values divided by it.
    std::vector<int8_t> q8;
    for (int i = 0; i < dim * out; ++i) q8.push_back(static_cast<int8_t>(i * 7 - 50));
    ParamDict int8 = P({{0, out}, {1, dim}, {3, dim * out}, {18, 1}});
    const Tensor y8 = run1("Embed", int8, {R(i64v({3, 1}))}, {make<int8_t>({dim * out}, DType::I8, q8), f32({1}, {4.f})});
    for (int p = 0; p < out; ++p) {
        EXPECT_FLOAT_EQ(y8.data<float>()[p], q8[static_cast<size_t>(3 * out + p)] / 4.f);
        EXPECT_FLOAT_EQ(y8.data<float>()[out + p], q8[static_cast<size_t>(out + p)] / 4.f);
    }
    EXPECT_TRUE(contains(error_of([&] { run1("Embed", P({{0, out}, {1, dim}, {3, 7}}), {R(words)}, {table}); }),
                         "weight_data_size"));
    // Float words: NaN and huge values clamp like out-of-range ints (no undefined conversion).
    const Tensor fw = run1("Embed", P({{0, out}, {1, dim}, {3, dim * out}}), {R(f32({3}, {std::nanf(""), 1e30f, 2.f}))}, {table});
    for (int p = 0; p < out; ++p) {
        EXPECT_EQ(fw.data<float>()[p], table.data<float>()[p]);
        EXPECT_EQ(fw.data<float>()[out + p], table.data<float>()[(dim - 1) * out + p]);
        EXPECT_EQ(fw.data<float>()[2 * out + p], table.data<float>()[2 * out + p]);
    }
}

} // namespace
} // namespace kestrel
