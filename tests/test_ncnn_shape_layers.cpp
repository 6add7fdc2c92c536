// ncnn's data-movement layers (Flip, PixelShuffle, Reorg, CopyTo, DeepCopy,
// Diag, Packing) and GLU against references written here from ncnn's loops:
// exact for moved values, 1e-5 relative for GLU.
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
