// ncnn's own params of layers whose concept the ONNX importer also uses
// (Squeeze, ExpandDims, Tile, ArgMax), against references written here from
// ncnn's semantics: shapes exact, values checked element by element.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>

#include "layer_test_util.h"

namespace kestrel {
namespace {

using namespace layer_test;

ParamDict with_ints(ParamDict pd, int id, std::vector<int> v)
{
    pd.set_ints(id, std::move(v));
    return pd;
}

// A view layer keeps every value in order; only the shape changes.
void expect_view(const std::string& type, const ParamDict& pd, const Shape& in, const Shape& expected)
{
    const Tensor x = random_f32(in, 7);
    const Tensor y = run1(type, pd, {R(x)});
    EXPECT_EQ(y.shape(), expected) << type << " of " << shape_str(in);
    EXPECT_EQ(values<float>(y), values<float>(x));
}

TEST(NcnnForms, SqueezeFlags)
{
    // 0=w 1=h 11=d 2=c; only dims of size 1 go.
    expect_view("Squeeze", P({{0, 1}, {1, 1}, {2, 1}}), {1, 3, 1}, {3});
    expect_view("Squeeze", P({{2, 1}}), {2, 1, 3}, {2, 1, 3}); // c is 2: kept
    expect_view("Squeeze", P({{1, 1}}), {2, 1, 3}, {2, 3});
    expect_view("Squeeze", P({{0, 1}, {1, 1}, {11, 1}, {2, 1}}), {1, 1, 2, 1}, {2});
    expect_view("Squeeze", P({{11, 1}}), {1, 2, 3}, {1, 2, 3}); // d counts only at rank 4
    expect_view("Squeeze", P({{11, 1}}), {2, 1, 3, 4}, {2, 3, 4});
    expect_view("Squeeze", P({{0, 1}, {1, 1}}), {1, 1}, {1}); // everything squeezed: (1)
    expect_view("Squeeze", P({{0, 1}}), {1}, {1});
    expect_view("Squeeze", P({{0, 1}}), {5}, {5});
    expect_view("Squeeze", P({}), {1, 1, 4}, {1, 1, 4}); // no flags: nothing
}

TEST(NcnnForms, SqueezeAxes)
{
    expect_view("Squeeze", with_ints(P({}), 3, {0, -1}), {1, 2, 1}, {2});
    expect_view("Squeeze", with_ints(P({}), 3, {1}), {1, 2, 1}, {1, 2, 1}); // size 2: kept
    expect_view("Squeeze", with_ints(P({{0, 1}}), 3, {0}), {1, 2, 1}, {2, 1}); // axes win over flags
    expect_view("Squeeze", with_ints(P({}), 3, {1, 2}), {3, 1, 1, 2}, {3, 2});
    EXPECT_TRUE(contains(error_of([] { run1("Squeeze", with_ints(P({}), 3, {3}), {R(random_f32({1, 2, 1}, 1))}); }),
                         "axis"));
    EXPECT_TRUE(contains(error_of([] { run1("Squeeze", P({{0, 1}}), {R(random_f32({1, 1, 1, 1, 2}, 1))}); }),
                         "rank 1-4"));
}

TEST(NcnnForms, ExpandDims)
{
    expect_view("ExpandDims", with_ints(P({}), 3, {0}), {3}, {1, 3});
    expect_view("ExpandDims", with_ints(P({}), 3, {1}), {3}, {3, 1});
    expect_view("ExpandDims", with_ints(P({}), 3, {0, 1, 2}), {3}, {1, 1, 1, 3});
    expect_view("ExpandDims", with_ints(P({}), 3, {1, 3}), {2, 3}, {2, 1, 3, 1});
    expect_view("ExpandDims", with_ints(P({}), 3, {-1}), {2, 3}, {2, 3, 1});
    expect_view("ExpandDims", with_ints(P({}), 3, {1}), {2, 3, 4}, {2, 1, 3, 4});
    EXPECT_TRUE(contains(error_of([] { run1("ExpandDims", with_ints(P({}), 3, {0, 1}), {R(random_f32({2, 3, 4}, 1))}); }),
                         "rank 4"));
    EXPECT_TRUE(contains(error_of([] { run1("ExpandDims", P({}), {R(random_f32({2}, 1))}); }), "param 3"));
}

// numpy's tile of x (shape `in`, already lifted to reps' rank).
std::vector<float> tile_reference(const std::vector<float>& x, const Shape& in, const std::vector<int64_t>& reps)
{
    Shape out(in.size());
    for (size_t k = 0; k < in.size(); ++k) out[k] = in[k] * reps[k];
    std::vector<float> y(static_cast<size_t>(shape_numel(out)));
    for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) {
        int64_t rest = i, src = 0, in_stride = 1;
        std::vector<int64_t> idx(out.size());
        for (size_t k = out.size(); k-- > 0;) {
            idx[k] = rest % out[k];
            rest /= out[k];
        }
        for (size_t k = out.size(); k-- > 0;) {
            src += (idx[k] % in[k]) * in_stride;
            in_stride *= in[k];
        }
        y[static_cast<size_t>(i)] = x[static_cast<size_t>(src)];
    }
    return y;
}

void expect_tile(const ParamDict& pd, const Shape& in, const Shape& lifted, const std::vector<int64_t>& reps)
{
    const Tensor x = random_f32(in, 3);
    const Tensor y = run1("Tile", pd, {R(x)});
    Shape out(lifted.size());
    for (size_t k = 0; k < lifted.size(); ++k) out[k] = lifted[k] * reps[k];
    EXPECT_EQ(y.shape(), out) << "input " << shape_str(in);
    EXPECT_EQ(values<float>(y), tile_reference(values<float>(x), lifted, reps)) << "input " << shape_str(in);
}

TEST(NcnnForms, TileAxisTiles)
{
    expect_tile(P({{0, 0}, {1, 3}}), {4}, {4}, {3});
    expect_tile(P({{0, 1}, {1, 2}}), {2, 3}, {2, 3}, {1, 2});
    expect_tile(P({{0, 0}, {1, 3}}), {2, 3, 4}, {2, 3, 4}, {3, 1, 1});
    expect_tile(P({{0, 2}, {1, 2}}), {2, 1, 3, 2}, {2, 1, 3, 2}, {1, 1, 2, 1});
    EXPECT_TRUE(contains(error_of([] { run1("Tile", P({{0, 2}, {1, 2}}), {R(random_f32({2, 3}, 1))}); }), "axis"));
}

TEST(NcnnForms, TileRepeats)
{
    auto reps = [](std::vector<int> r) { return with_ints(P({}), 2, std::move(r)); };
    expect_tile(reps({2, 2}), {2, 3}, {2, 3}, {2, 2});
    expect_tile(reps({2}), {2, 3, 4}, {2, 3, 4}, {1, 1, 2}); // aligned with the last dims
    expect_tile(reps({2, 3}), {4}, {1, 4}, {2, 3});          // the input lifted
    expect_tile(reps({2, 1, 2}), {3, 2}, {1, 3, 2}, {2, 1, 2});
    expect_tile(reps({2, 3, 1, 2}), {2, 3, 4}, {2, 1, 3, 4}, {2, 3, 1, 2}); // ncnn: c stays outermost
    expect_tile(reps({1, 2, 1}), {2, 1, 3, 2}, {2, 1, 3, 2}, {1, 1, 2, 1});
    EXPECT_TRUE(contains(error_of([&] { run1("Tile", reps({1, 1, 1, 1, 2}), {R(random_f32({2}, 1))}); }), "param 2"));
}

// ncnn's ArgMax: (value, index) pairs sorted in descending order.
std::vector<std::pair<float, int>> sorted_pairs(const Tensor& x)
{
    std::vector<std::pair<float, int>> v;
    for (int64_t i = 0; i < x.numel(); ++i) v.emplace_back(x.data<float>()[i], static_cast<int>(i));
    std::sort(v.begin(), v.end(), std::greater<std::pair<float, int>>());
    return v;
}

TEST(NcnnForms, ArgMaxTopK)
{
    Tensor x = random_f32({2, 3, 4}, 11);
    x.data<float>()[5] = x.data<float>()[17] = 9.f; // a tie at the top: the higher index first
    const auto ref = sorted_pairs(x);
    const Tensor both = run1("ArgMax", P({{0, 1}, {1, 3}}), {R(x)});
    ASSERT_EQ(both.shape(), Shape({2, 3}));
    for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(both.data<float>()[j], ref[j].first);
        EXPECT_EQ(both.data<float>()[3 + j], static_cast<float>(ref[j].second));
    }
    EXPECT_EQ(both.data<float>()[3], 17.f);
    const Tensor top1 = run1("ArgMax", P({}), {R(random_f32({7}, 2))});
    ASSERT_EQ(top1.shape(), Shape({1, 1}));
    EXPECT_EQ(top1.data<float>()[0], static_cast<float>(sorted_pairs(random_f32({7}, 2))[0].second));
    const Tensor x2 = random_f32({3, 5}, 4);
    const Tensor idx = run1("ArgMax", P({{1, 4}}), {R(x2)});
    ASSERT_EQ(idx.shape(), Shape({1, 4}));
    const auto ref2 = sorted_pairs(x2);
    for (int j = 0; j < 4; ++j) EXPECT_EQ(idx.data<float>()[j], static_cast<float>(ref2[j].second));
    EXPECT_TRUE(contains(error_of([] { run1("ArgMax", P({{1, 9}}), {R(random_f32({2, 3}, 1))}); }), "topk"));
    EXPECT_TRUE(contains(error_of([] { run1("ArgMax", P({{1, 0}}), {R(random_f32({2, 3}, 1))}); }), "topk"));
}

} // namespace
} // namespace kestrel
