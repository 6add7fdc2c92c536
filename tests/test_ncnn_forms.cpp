// ncnn's own params of layers whose concept the ONNX importer also uses
// (Squeeze, ExpandDims, Tile, ArgMax), against references written here from
// ncnn's semantics: shapes exact, values checked element by element.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "frontend/ncnn/param.h"
#include "layer_test_util.h"

namespace kestrel {
namespace {

using namespace layer_test;

// A view layer keeps every value in order; only the shape changes.
void expect_view(const std::string& type, const ParamDict& pd, const Shape& in, const Shape& expected)
{
    const Tensor x = random_f32(in, 7);
    const Tensor y = run1(type, pd, {R(x)});
    EXPECT_EQ(y.shape(), expected) << type << " of " << shape_str(in);
    EXPECT_EQ(values<float>(y), values<float>(x));
}

// Every layer type of ncnn's registry (what a .param.bin can index) exists.
TEST(NcnnForms, EveryNcnnLayerTypeIsRegistered)
{
    int count = 0;
    std::string missing;
    for (int i = 0; ncnn_layer_type_name(i) != nullptr; ++i, ++count)
        if (!create_op(ncnn_layer_type_name(i))) missing += std::string(" ") + ncnn_layer_type_name(i);
    EXPECT_EQ(count, 110);
    EXPECT_EQ(missing, "") << "ncnn layer types without an op:" << missing;
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

// ---- GridSample: volumes, permute_fusion, ncnn's rounding ----------------------------

// Unnormalized coordinate of g along a dim of `size`.
double unnormalize(double g, int64_t size, bool align)
{
    return align ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
}

// Trilinear (zeros padding) or nearest (halves up, as ncnn) sampling of a
// (C, D, H, W) volume at grid points (Do, Ho, Wo, 3), written from the formulas.
std::vector<float> volume_reference(const Tensor& x, const Tensor& grid, bool nearest, bool align)
{
    const int64_t c = x.dim(0), d = x.dim(1), h = x.dim(2), w = x.dim(3), points = grid.numel() / 3;
    auto voxel = [&](int64_t ch, int64_t z, int64_t y, int64_t xx) -> double {
        if (z < 0 || z >= d || y < 0 || y >= h || xx < 0 || xx >= w) return 0;
        return x.data<float>()[((ch * d + z) * h + y) * w + xx];
    };
    std::vector<float> out;
    for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < points; ++p) {
            const float* g = grid.data<float>() + 3 * p;
            const double px = unnormalize(g[0], w, align), py = unnormalize(g[1], h, align), pz = unnormalize(g[2], d, align);
            if (nearest) {
                out.push_back(static_cast<float>(voxel(ch, static_cast<int64_t>(std::floor(pz + 0.5)),
                                                       static_cast<int64_t>(std::floor(py + 0.5)),
                                                       static_cast<int64_t>(std::floor(px + 0.5)))));
                continue;
            }
            const int64_t x0 = static_cast<int64_t>(std::floor(px)), y0 = static_cast<int64_t>(std::floor(py)),
                          z0 = static_cast<int64_t>(std::floor(pz));
            double sum = 0;
            for (int dz = 0; dz < 2; ++dz)
                for (int dy = 0; dy < 2; ++dy)
                    for (int dx = 0; dx < 2; ++dx) {
                        const double wt = (dz ? pz - z0 : 1 - (pz - z0)) * (dy ? py - y0 : 1 - (py - y0)) *
                                          (dx ? px - x0 : 1 - (px - x0));
                        sum += wt * voxel(ch, z0 + dz, y0 + dy, x0 + dx);
                    }
            out.push_back(static_cast<float>(sum));
        }
    return out;
}

void expect_close(const Tensor& got, const std::vector<float>& want, const std::string& what)
{
    ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
    for (size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(got.data<float>()[i], want[i], 1e-5 * std::max(1.f, std::fabs(want[i]))) << what << " at " << i;
}

// (points..., k) interleaved -> (k, points...) coordinate-major, as ncnn's permute_fusion stores it.
Tensor coordinate_major(const Tensor& grid)
{
    const int64_t k = grid.shape().back(), points = grid.numel() / k;
    Shape s(grid.shape().begin(), grid.shape().end() - 1);
    s.insert(s.begin(), k);
    Tensor t(s, DType::F32);
    for (int64_t p = 0; p < points; ++p)
        for (int64_t i = 0; i < k; ++i) t.data<float>()[i * points + p] = grid.data<float>()[p * k + i];
    return t;
}

TEST(NcnnForms, GridSampleVolumes)
{
    const Tensor x = random_f32({2, 3, 4, 5}, 31);
    const Tensor grid = random_f32({2, 3, 2, 3}, 32, -1.2f, 1.2f); // some points outside
    for (const bool align : {false, true})
        for (const bool nearest : {false, true}) {
            const ParamDict pd = P({{0, nearest ? 2 : 1}, {2, align ? 1 : 0}});
            const std::string what = std::string(nearest ? "nearest" : "trilinear") + (align ? " aligned" : "");
            const Tensor y = run1("GridSample", pd, {R(x), R(grid)});
            EXPECT_EQ(y.shape(), Shape({2, 2, 3, 2})) << what;
            expect_close(y, volume_reference(x, grid, nearest, align), what);
            ParamDict fused = pd;
            fused.set_int(3, 1);
            const Tensor yf = run1("GridSample", fused, {R(x), R(coordinate_major(grid))});
            EXPECT_EQ(yf.shape(), y.shape()) << what;
            EXPECT_EQ(values<float>(yf), values<float>(y)) << what << " (permute_fusion)";
        }
    EXPECT_TRUE(contains(error_of([&] { run1("GridSample", P({{0, 3}}), {R(x), R(grid)}); }), "bicubic"));
}

TEST(NcnnForms, GridSamplePlanesPermuteFusionAndRounding)
{
    const Tensor x = random_f32({3, 4, 5}, 41);
    const Tensor grid = random_f32({2, 6, 2}, 42, -1.1f, 1.1f);
    for (const int mode : {1, 2, 3}) {
        const Tensor y = run1("GridSample", P({{0, mode}, {1, 2}}), {R(x), R(grid)});
        const Tensor yf = run1("GridSample", P({{0, mode}, {1, 2}, {3, 1}}), {R(x), R(coordinate_major(grid))});
        EXPECT_EQ(y.shape(), Shape({3, 2, 6}));
        EXPECT_EQ(values<float>(yf), values<float>(y)) << "sample_type " << mode;
    }
    // Nearest at a half: aligned gx = -0.5 on W = 3 is x = 0.5; ncnn rounds it
    // up to pixel 1, ONNX (20=1) to the even pixel 0.
    const Tensor row = f32({1, 1, 3}, {10, 20, 30});
    const Tensor half = f32({1, 1, 2}, {-0.5f, 0.f});
    EXPECT_EQ(run1("GridSample", P({{0, 2}, {2, 1}}), {R(row), R(half)}).data<float>()[0], 20.f);
    EXPECT_EQ(run1("GridSample", P({{0, 2}, {2, 1}, {20, 1}}), {R(row), R(half)}).data<float>()[0], 10.f);
}

} // namespace
} // namespace kestrel
