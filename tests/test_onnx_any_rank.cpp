// ONNX ops at every rank the spec allows, not only (N,C,H,W): global pools,
// GlobalLpPool, LpPool and LRN at ranks 3 and 5 (a 1-D signal, a 3-D video
// volume), and PyTorch's legacy per-channel PRelu slopes at ranks 3-5,
// against naive loops over the definitions here.
#include <cmath>

#include "layer_test_util.h"
#include "onnx_test_graph.h"

#ifdef KESTREL_HAVE_ONNX
namespace kestrel {
namespace {

using layer_test::OnnxGraph;

// A (1, 3, spatial...) tensor's values and its spatial size.
struct Volume {
    Shape shape;
    Tensor x;
    int64_t positions() const { return x.numel() / 3; }
};

Volume volume(const Shape& spatial, unsigned seed)
{
    Shape s = {1, 3};
    s.insert(s.end(), spatial.begin(), spatial.end());
    return {s, layer_test::random_f32(s, seed)};
}

Tensor run_one(const std::string& op, const Volume& v, const std::function<void(onnx::NodeProto*)>& attrs,
               int opset = 18)
{
    OnnxGraph g(opset);
    g.input("x", v.shape);
    attrs(g.node(op, {"x"}, {"y"}));
    g.output("y", static_cast<int>(v.shape.size()));
    const Net net = g.load(true);
    Session s(net);
    s.set_input("x", v.x);
    return s.get("y");
}

void expect_near_all(const Tensor& got, const std::vector<float>& want, const Shape& shape, const std::string& what)
{
    ASSERT_EQ(got.shape(), shape) << what;
    for (size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(got.data<float>()[i], want[i], 1e-5f * std::max(1.f, std::fabs(want[i]))) << what << " at " << i;
}

const std::vector<Shape> kSpatial = {{7}, {4, 5, 6}};

TEST(OnnxAnyRank, GlobalPoolsOverEverySpatialAxis)
{
    for (const Shape& spatial : kSpatial) {
        const Volume v = volume(spatial, 11);
        const std::string what = "rank " + std::to_string(v.shape.size());
        Shape kept = {1, 3};
        kept.resize(v.shape.size(), 1);
        std::vector<float> mean(3), max(3, -INFINITY), l2(3), l3(3);
        const int64_t n = v.positions();
        for (int c = 0; c < 3; ++c) {
            double sum = 0, sq = 0, cube = 0;
            for (int64_t i = 0; i < n; ++i) {
                const float x = v.x.data<float>()[c * n + i];
                sum += x, sq += double(x) * x, cube += std::pow(std::fabs(double(x)), 3.0);
                max[c] = std::max(max[c], x);
            }
            mean[c] = static_cast<float>(sum / double(n));
            l2[c] = static_cast<float>(std::sqrt(sq));
            l3[c] = static_cast<float>(std::cbrt(cube));
        }
        const auto none = [](onnx::NodeProto*) {};
        expect_near_all(run_one("GlobalAveragePool", v, none), mean, kept, what + " GlobalAveragePool");
        expect_near_all(run_one("GlobalMaxPool", v, none), max, kept, what + " GlobalMaxPool");
        expect_near_all(run_one("GlobalLpPool", v, none), l2, kept, what + " GlobalLpPool p=2");
        expect_near_all(run_one("GlobalLpPool", v, [](onnx::NodeProto* n) { OnnxGraph::attr_int(n, "p", 3); }), l3,
                        kept, what + " GlobalLpPool p=3");
    }
}

// LpPool: windows of 2 along each spatial axis, stride 2 along the first,
// padding 1 at the start of the last; p = 2 and 3.
TEST(OnnxAnyRank, LpPoolWindowsAtRanks3And5)
{
    for (const Shape& spatial : kSpatial)
        for (int64_t p : {2, 3}) {
            const Volume v = volume(spatial, 12);
            const int nd = static_cast<int>(spatial.size());
            std::vector<int64_t> kernel(nd, 2), strides(nd, 1), pads(2 * nd, 0);
            strides[0] = 2, pads[nd - 1] = 1;
            Shape out = {1, 3};
            for (int a = 0; a < nd; ++a) out.push_back((spatial[a] + pads[a] + pads[nd + a] - 2) / strides[a] + 1);
            std::vector<float> want;
            const int64_t outs = shape_numel(out) / 3;
            for (int c = 0; c < 3; ++c)
                for (int64_t o = 0; o < outs; ++o) {
                    std::vector<int64_t> at(nd); // the output's coordinates, last fastest
                    for (int64_t a = nd - 1, rest = o; a >= 0; --a) {
                        at[a] = rest % out[2 + a];
                        rest /= out[2 + a];
                    }
                    double sum = 0;
                    for (int tap = 0; tap < (1 << nd); ++tap) {
                        int64_t flat = 0;
                        bool inside = true;
                        for (int a = 0; a < nd; ++a) {
                            const int64_t i = at[a] * strides[a] - pads[a] + (tap >> (nd - 1 - a) & 1);
                            inside = inside && i >= 0 && i < spatial[a];
                            flat = flat * spatial[a] + i;
                        }
                        if (!inside) continue;
                        sum += std::pow(std::fabs(double(v.x.data<float>()[c * v.positions() + flat])), double(p));
                    }
                    want.push_back(static_cast<float>(std::pow(sum, 1.0 / double(p))));
                }
            const Tensor y = run_one("LpPool", v, [&](onnx::NodeProto* n) {
                OnnxGraph::attr_ints(n, "kernel_shape", kernel);
                OnnxGraph::attr_ints(n, "strides", strides);
                OnnxGraph::attr_ints(n, "pads", pads);
                OnnxGraph::attr_int(n, "p", p);
            });
            expect_near_all(y, want, out, "rank " + std::to_string(nd + 2) + " p=" + std::to_string(p));
        }
}

// LRN across channels at every position, whatever the spatial rank.
TEST(OnnxAnyRank, LrnAtRanks3And5)
{
    for (const Shape& spatial : kSpatial) {
        const Volume v = volume(spatial, 13);
        const float alpha = 0.3f, beta = 0.6f, bias = 1.5f;
        const int size = 3;
        const int64_t n = v.positions();
        std::vector<float> want(static_cast<size_t>(3 * n));
        for (int c = 0; c < 3; ++c)
            for (int64_t i = 0; i < n; ++i) {
                double sq = 0;
                for (int k = c - (size - 1) / 2; k <= c + size / 2; ++k)
                    if (k >= 0 && k < 3) sq += double(v.x.data<float>()[k * n + i]) * v.x.data<float>()[k * n + i];
                const double x = v.x.data<float>()[c * n + i];
                want[c * n + i] = static_cast<float>(x / std::pow(bias + alpha / size * sq, beta));
            }
        const Tensor y = run_one("LRN", v, [&](onnx::NodeProto* node) {
            OnnxGraph::attr_int(node, "size", size);
            OnnxGraph::attr_float(node, "alpha", alpha);
            OnnxGraph::attr_float(node, "beta", beta);
            OnnxGraph::attr_float(node, "bias", bias);
        }, 13);
        expect_near_all(y, want, v.shape, "rank " + std::to_string(v.shape.size()));
    }
}

// PRelu's slope of shape (C,) on (N, C, ...): PyTorch's legacy exports mean
// it per channel where ONNX's rule cannot place it (the last axis is not C);
// where the last axis is C, ONNX's rule holds (the slope runs along it).
TEST(OnnxAnyRank, PReluLegacyPerChannelSlope)
{
    const std::vector<float> slope = {0.5f, -2.f, 0.25f};
    for (const Shape& shape : {Shape{2, 3, 4}, Shape{2, 3, 4, 5}, Shape{2, 3, 2, 2, 2}, Shape{2, 3, 4, 3}}) {
        const bool last_axis = shape.back() == 3;
        OnnxGraph g(9);
        g.input("x", shape);
        g.init("slope", layer_test::f32({3}, slope));
        g.node("PRelu", {"x", "slope"}, {"y"});
        g.output("y", static_cast<int>(shape.size()));
        const Net net = g.load(true);
        Session s(net);
        const Tensor x = layer_test::random_f32(shape, 21);
        s.set_input("x", x);
        const Tensor y = s.get("y");
        ASSERT_EQ(y.shape(), shape);
        const int64_t inner = shape_numel(shape) / shape[0] / shape[1];
        for (int64_t i = 0; i < x.numel(); ++i) {
            const int64_t c = last_axis ? i % 3 : i / inner % 3;
            const float v = x.data<float>()[i];
            EXPECT_EQ(y.data<float>()[i], v < 0 ? v * slope[c] : v) << shape_str(shape) << " at " << i;
        }
    }
}

} // namespace
} // namespace kestrel
#endif
