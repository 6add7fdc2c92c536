// ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul through the ONNX
// importer (lowered to dequantize -> float op -> cast / quantize), against
// naive references written here from the ONNX formulas: integer accumulation
// of (q - zero_point) products, then for the QLinear ops the rescale by
// x_scale * w_scale / y_scale in double, round half to even, + y_zero_point,
// saturated. Shapes are larger than the conformance cases, with groups,
// strides, padding, per-channel / per-row / per-column zero points and
// scales, a bias, and weights given at run time.
#include <cmath>
#include <random>

#include "layer_test_util.h"
#include "onnx_test_graph.h"

#ifdef KESTREL_HAVE_ONNX
namespace kestrel {
namespace {

using layer_test::OnnxGraph;

template <class T> Tensor random_ints(const Shape& s, DType t, int lo, int hi, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(lo, hi);
    Tensor x(s, t);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<T>()[i] = static_cast<T>(dist(rng));
    return x;
}

template <class T> int value_at(const Tensor& t, int64_t i) { return static_cast<int>(t.data<T>()[i]); }

// Zero point / scale of channel c: one value or one per channel.
template <class T> int zp_at(const Tensor& zp, int64_t c) { return value_at<T>(zp, zp.numel() == 1 ? 0 : c); }
float scale_at(const Tensor& s, int64_t c) { return s.data<float>()[s.numel() == 1 ? 0 : c]; }

struct ConvShape {
    int64_t n = 2, c = 4, h = 9, w = 8, m = 6, k = 3, stride = 2, pad = 1, group = 2;
    int64_t oh() const { return (h + 2 * pad - k) / stride + 1; }
    int64_t ow() const { return (w + 2 * pad - k) / stride + 1; }
};

// int32 sums of (x - x_zp)(w - w_zp[m]) (+ bias[m]); padding contributes 0. x uint8, w int8.
std::vector<int64_t> conv_integer_reference(const ConvShape& s, const Tensor& x, const Tensor& w, const Tensor& x_zp,
                                            const Tensor& w_zp, const Tensor* bias)
{
    std::vector<int64_t> acc;
    const int64_t cg = s.c / s.group, mg = s.m / s.group;
    for (int64_t n = 0; n < s.n; ++n)
        for (int64_t m = 0; m < s.m; ++m)
            for (int64_t oy = 0; oy < s.oh(); ++oy)
                for (int64_t ox = 0; ox < s.ow(); ++ox) {
                    int64_t sum = bias ? bias->data<int32_t>()[m] : 0;
                    for (int64_t ci = 0; ci < cg; ++ci)
                        for (int64_t ky = 0; ky < s.k; ++ky)
                            for (int64_t kx = 0; kx < s.k; ++kx) {
                                const int64_t iy = oy * s.stride - s.pad + ky, ix = ox * s.stride - s.pad + kx;
                                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                                const int64_t c = (m / mg) * cg + ci;
                                const int xv = value_at<uint8_t>(x, ((n * s.c + c) * s.h + iy) * s.w + ix) -
                                               zp_at<uint8_t>(x_zp, 0);
                                const int wv = value_at<int8_t>(w, ((m * cg + ci) * s.k + ky) * s.k + kx) -
                                               zp_at<int8_t>(w_zp, m);
                                sum += static_cast<int64_t>(xv) * wv;
                            }
                    acc.push_back(sum);
                }
    return acc;
}

// round_half_even(acc * scale) + zp, saturated to uint8.
int requantize(int64_t acc, double scale, int zp)
{
    const double r = std::nearbyint(static_cast<double>(acc) * scale) + zp;
    return static_cast<int>(std::min(255.0, std::max(0.0, r)));
}

void conv_attrs(onnx::NodeProto* node, const ConvShape& s)
{
    OnnxGraph::attr_ints(node, "kernel_shape", {s.k, s.k});
    OnnxGraph::attr_ints(node, "strides", {s.stride, s.stride});
    OnnxGraph::attr_ints(node, "pads", {s.pad, s.pad, s.pad, s.pad});
    OnnxGraph::attr_int(node, "group", s.group);
}

Tensor floats(const std::vector<float>& v)
{
    Tensor t({static_cast<int64_t>(v.size())}, DType::F32);
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
}

// uint8 x with one zero point, int8 w with one zero point per output channel.
struct ConvOperands {
    Tensor x, w, x_zp, w_zp;
};
ConvOperands conv_operands(const ConvShape& s, uint32_t seed)
{
    return {random_ints<uint8_t>({s.n, s.c, s.h, s.w}, DType::U8, 0, 255, seed),
            random_ints<int8_t>({s.m, s.c / s.group, s.k, s.k}, DType::I8, -128, 127, seed + 1),
            random_ints<uint8_t>({}, DType::U8, 100, 140, seed + 2), random_ints<int8_t>({s.m}, DType::I8, -5, 5, seed + 3)};
}

Tensor run(const OnnxGraph& g, const std::vector<std::pair<std::string, Tensor>>& inputs)
{
    const Net net = g.load(true);
    Session session(net);
    for (const auto& [name, t] : inputs) session.set_input(name, t);
    return session.get("y");
}

TEST(OnnxQuantized, ConvIntegerWithGroupsStridePaddingAndPerChannelZeroPoints)
{
    const ConvShape s;
    const auto [x, w, x_zp, w_zp] = conv_operands(s, 1);
    OnnxGraph g(10);
    g.input("x", x.shape(), onnx::TensorProto::UINT8);
    g.raw_init("w", w, onnx::TensorProto::INT8);
    g.raw_init("x_zp", x_zp, onnx::TensorProto::UINT8);
    g.raw_init("w_zp", w_zp, onnx::TensorProto::INT8);
    conv_attrs(g.node("ConvInteger", {"x", "w", "x_zp", "w_zp"}, {"y"}), s);
    g.output("y", 4, onnx::TensorProto::INT32);
    const Tensor y = run(g, {{"x", x}});
    ASSERT_EQ(y.dtype(), DType::I32);
    ASSERT_EQ(y.shape(), (Shape{s.n, s.m, s.oh(), s.ow()}));
    const std::vector<int64_t> want = conv_integer_reference(s, x, w, x_zp, w_zp, nullptr);
    for (int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(y.data<int32_t>()[i], want[static_cast<size_t>(i)]) << i;
}

// QLinearConv with per-channel weight scales and zero points and a bias; the
// weights once as initializers (dequantized while converting), once as a graph
// input (dequantized at run time).
TEST(OnnxQuantized, QLinearConvPerChannelWithBiasConstantOrRunTimeWeights)
{
    const ConvShape s;
    const auto [x, w, x_zp, w_zp] = conv_operands(s, 5);
    const Tensor y_zp = random_ints<uint8_t>({}, DType::U8, 110, 130, 9);
    const Tensor bias = random_ints<int32_t>({s.m}, DType::I32, -3000, 3000, 10);
    const Tensor x_scale = floats({0.02f}), y_scale = floats({0.9f});
    const Tensor w_scale = floats({0.011f, 0.007f, 0.013f, 0.009f, 0.004f, 0.017f});
    const std::vector<int64_t> acc = conv_integer_reference(s, x, w, x_zp, w_zp, &bias);
    for (bool weights_at_run_time : {false, true}) {
        SCOPED_TRACE(weights_at_run_time ? "run-time weights" : "constant weights");
        OnnxGraph g(10);
        g.input("x", x.shape(), onnx::TensorProto::UINT8);
        if (weights_at_run_time) g.input("w", w.shape(), onnx::TensorProto::INT8);
        else g.raw_init("w", w, onnx::TensorProto::INT8);
        g.raw_init("xs", x_scale.reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("x_zp", x_zp, onnx::TensorProto::UINT8);
        g.raw_init("ws", w_scale, onnx::TensorProto::FLOAT);
        g.raw_init("w_zp", w_zp, onnx::TensorProto::INT8);
        g.raw_init("ys", y_scale.reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("y_zp", y_zp, onnx::TensorProto::UINT8);
        g.raw_init("b", bias, onnx::TensorProto::INT32);
        conv_attrs(g.node("QLinearConv", {"x", "xs", "x_zp", "w", "ws", "w_zp", "ys", "y_zp", "b"}, {"y"}), s);
        g.output("y", 4, onnx::TensorProto::UINT8);
        std::vector<std::pair<std::string, Tensor>> inputs = {{"x", x}};
        if (weights_at_run_time) inputs.push_back({"w", w});
        const Tensor y = run(g, inputs);
        ASSERT_EQ(y.dtype(), DType::U8);
        ASSERT_EQ(y.shape(), (Shape{s.n, s.m, s.oh(), s.ow()}));
        // Float sums may land one step off at a rounding tie: all within 1, nearly all exact.
        const int64_t plane = s.oh() * s.ow();
        int64_t off_by_one = 0;
        for (int64_t i = 0; i < y.numel(); ++i) {
            const int64_t m = (i / plane) % s.m;
            const double scale = static_cast<double>(x_scale.data<float>()[0]) * w_scale.data<float>()[m] /
                                 y_scale.data<float>()[0];
            const int want = requantize(acc[static_cast<size_t>(i)], scale, value_at<uint8_t>(y_zp, 0));
            const int got = y.data<uint8_t>()[i];
            ASSERT_LE(std::abs(got - want), 1) << i;
            off_by_one += got != want;
        }
        EXPECT_LE(off_by_one, y.numel() / 100) << off_by_one << " of " << y.numel() << " one step off";
    }
}

TEST(OnnxQuantized, MatMulIntegerBatchedWithPerRowAndPerColumnZeroPoints)
{
    const int64_t batch = 3, m = 5, k = 7, n = 4;
    const Tensor a = random_ints<uint8_t>({batch, m, k}, DType::U8, 0, 255, 11);
    const Tensor b = random_ints<int8_t>({k, n}, DType::I8, -128, 127, 12);
    const Tensor a_zp = random_ints<uint8_t>({m}, DType::U8, 120, 135, 13);
    const Tensor b_zp = random_ints<int8_t>({n}, DType::I8, -4, 4, 14);
    OnnxGraph g(10);
    g.input("a", a.shape(), onnx::TensorProto::UINT8);
    g.raw_init("b", b, onnx::TensorProto::INT8);
    g.raw_init("a_zp", a_zp, onnx::TensorProto::UINT8);
    g.raw_init("b_zp", b_zp, onnx::TensorProto::INT8);
    g.node("MatMulInteger", {"a", "b", "a_zp", "b_zp"}, {"y"});
    g.output("y", 3, onnx::TensorProto::INT32);
    const Tensor y = run(g, {{"a", a}});
    ASSERT_EQ(y.dtype(), DType::I32);
    ASSERT_EQ(y.shape(), (Shape{batch, m, n}));
    for (int64_t p = 0; p < batch; ++p)
        for (int64_t r = 0; r < m; ++r)
            for (int64_t c = 0; c < n; ++c) {
                int64_t sum = 0;
                for (int64_t i = 0; i < k; ++i)
                    sum += static_cast<int64_t>(value_at<uint8_t>(a, (p * m + r) * k + i) - zp_at<uint8_t>(a_zp, r)) *
                           (value_at<int8_t>(b, i * n + c) - zp_at<int8_t>(b_zp, c));
                ASSERT_EQ(y.data<int32_t>()[(p * m + r) * n + c], sum) << p << "," << r << "," << c;
            }
}

TEST(OnnxQuantized, QLinearMatMulWithPerColumnScalesOfB)
{
    const int64_t batch = 2, m = 6, k = 9, n = 3;
    const Tensor a = random_ints<uint8_t>({batch, m, k}, DType::U8, 0, 255, 15);
    const Tensor b = random_ints<uint8_t>({k, n}, DType::U8, 0, 255, 16);
    const Tensor a_zp = random_ints<uint8_t>({}, DType::U8, 120, 135, 17);
    const Tensor b_zp = random_ints<uint8_t>({n}, DType::U8, 120, 135, 18);
    const Tensor y_zp = random_ints<uint8_t>({}, DType::U8, 100, 140, 19);
    const Tensor a_scale = floats({0.03f}), b_scale = floats({0.02f, 0.011f, 0.005f}), y_scale = floats({1.3f});
    OnnxGraph g(10);
    g.input("a", a.shape(), onnx::TensorProto::UINT8);
    g.raw_init("as", a_scale.reshaped({}), onnx::TensorProto::FLOAT);
    g.raw_init("a_zp", a_zp, onnx::TensorProto::UINT8);
    g.raw_init("b", b, onnx::TensorProto::UINT8);
    g.raw_init("bs", b_scale, onnx::TensorProto::FLOAT);
    g.raw_init("b_zp", b_zp, onnx::TensorProto::UINT8);
    g.raw_init("ys", y_scale.reshaped({}), onnx::TensorProto::FLOAT);
    g.raw_init("y_zp", y_zp, onnx::TensorProto::UINT8);
    g.node("QLinearMatMul", {"a", "as", "a_zp", "b", "bs", "b_zp", "ys", "y_zp"}, {"y"});
    g.output("y", 3, onnx::TensorProto::UINT8);
    const Tensor y = run(g, {{"a", a}});
    ASSERT_EQ(y.dtype(), DType::U8);
    ASSERT_EQ(y.shape(), (Shape{batch, m, n}));
    int64_t off_by_one = 0;
    for (int64_t p = 0; p < batch; ++p)
        for (int64_t r = 0; r < m; ++r)
            for (int64_t c = 0; c < n; ++c) {
                int64_t sum = 0;
                for (int64_t i = 0; i < k; ++i)
                    sum += static_cast<int64_t>(value_at<uint8_t>(a, (p * m + r) * k + i) - zp_at<uint8_t>(a_zp, 0)) *
                           (value_at<uint8_t>(b, i * n + c) - zp_at<uint8_t>(b_zp, c));
                const double scale =
                    static_cast<double>(a_scale.data<float>()[0]) * scale_at(b_scale, c) / y_scale.data<float>()[0];
                const int want = requantize(sum, scale, value_at<uint8_t>(y_zp, 0));
                const int got = y.data<uint8_t>()[(p * m + r) * n + c];
                ASSERT_LE(std::abs(got - want), 1) << p << "," << r << "," << c;
                off_by_one += got != want;
            }
    EXPECT_LE(off_by_one, 1) << off_by_one << " one step off";
}

TEST(OnnxQuantized, BiasWithScalesOnlyKnownAtRunTimeIsAClearError)
{
    const ConvShape s;
    OnnxGraph g(10);
    g.input("x", {s.n, s.c, s.h, s.w}, onnx::TensorProto::UINT8);
    g.input("xs", {}, onnx::TensorProto::FLOAT);
    g.raw_init("w", random_ints<int8_t>({s.m, s.c / s.group, s.k, s.k}, DType::I8, -128, 127, 20),
               onnx::TensorProto::INT8);
    for (const char* name : {"x_zp", "y_zp"}) g.raw_init(name, random_ints<uint8_t>({}, DType::U8, 0, 9, 21), onnx::TensorProto::UINT8);
    g.raw_init("w_zp", random_ints<int8_t>({}, DType::I8, 0, 0, 22), onnx::TensorProto::INT8);
    g.raw_init("ws", floats({0.01f}).reshaped({}), onnx::TensorProto::FLOAT);
    g.raw_init("ys", floats({0.5f}).reshaped({}), onnx::TensorProto::FLOAT);
    g.raw_init("b", random_ints<int32_t>({s.m}, DType::I32, -9, 9, 23), onnx::TensorProto::INT32);
    conv_attrs(g.node("QLinearConv", {"x", "xs", "x_zp", "w", "ws", "w_zp", "ys", "y_zp", "b"}, {"y"}), s);
    g.output("y", 4, onnx::TensorProto::UINT8);
    const std::string msg = layer_test::error_of([&] { g.load(true); });
    EXPECT_TRUE(layer_test::contains(msg, "QLinearConv")) << msg;
    EXPECT_TRUE(layer_test::contains(msg, "x_scale and w_scale known at conversion time")) << msg;
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_ONNX
