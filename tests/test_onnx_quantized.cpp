// ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul, QGemm and QDQ
// Conv / MatMul / Gemm through the ONNX importer (on the int8 layers in
// ONNX's form, or lowered to dequantize -> float op -> cast / quantize), against
// naive references written here from the ONNX formulas: integer accumulation
// of (q - zero_point) products, then for the QLinear ops the rescale by
// x_scale * w_scale / y_scale in double, round half to even, + y_zero_point,
// saturated. Shapes are larger than the conformance cases, with groups,
// strides, padding, per-channel / per-row / per-column zero points and
// scales, a bias, and weights given at run time.
#include <cmath>
#include <cstring>
#include <random>

#include "layer_test_util.h"
#include "graph/graph.h"
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

// A uint8 or int8 value (by the tensor's dtype).
int byte_value(const Tensor& t, int64_t i) { return t.dtype() == DType::U8 ? value_at<uint8_t>(t, i) : value_at<int8_t>(t, i); }

// int32 sums of (x - x_zp)(w - w_zp[m]) (+ bias[m]); padding contributes 0. x uint8 or int8, w int8.
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
                                const int xv = byte_value(x, ((n * s.c + c) * s.h + iy) * s.w + ix) -
                                               byte_value(x_zp, 0);
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

// y against QLinearConv's definition with ONNX Runtime's arithmetic: integer
// sums of (x - x_zp) * w (+ bias), times the float32 factor x_scale * w_scale
// / y_scale, rounded half to even, plus y_zp, saturated. w int8 with zero
// zero point.
void expect_qlinear_conv(const Tensor& y, const ConvShape& s, const Tensor& x, const Tensor& w, const Tensor& x_zp,
                         int yz, bool y_uint8, const Tensor* bias, float x_scale, const std::vector<float>& ws,
                         float y_scale)
{
    const std::vector<int64_t> acc = conv_integer_reference(s, x, w, x_zp, Tensor::zeros({s.m}, DType::I8), bias);
    const int64_t plane = s.oh() * s.ow();
    const int lo = y_uint8 ? 0 : -128, hi = y_uint8 ? 255 : 127;
    ASSERT_EQ(y.shape(), (Shape{s.n, s.m, s.oh(), s.ow()}));
    for (int64_t i = 0; i < y.numel(); ++i) {
        const int64_t m = (i / plane) % s.m;
        const float factor = x_scale * ws[static_cast<size_t>(m)] / y_scale;
        const float scaled = static_cast<float>(acc[static_cast<size_t>(i)]) * factor;
        const int want = static_cast<int>(std::min<double>(hi, std::max<double>(lo, std::nearbyint(scaled) + yz)));
        ASSERT_EQ(byte_value(y, i), want) << "output " << i << " (sum " << acc[static_cast<size_t>(i)] << ")";
    }
}

bool has_int8_onnx_form(const Net& net)
{
    for (const Layer& l : net.graph().layers)
        if (l.params.get_int(25, 0) == 1) return true;
    return false;
}

// y of g (optimized) with input `name` = x, checking that g took the int8 layers' ONNX form.
Tensor run_on_int8_form(const OnnxGraph& g, const std::string& name, const Tensor& x)
{
    const Net net = g.load(true);
    EXPECT_TRUE(has_int8_onnx_form(net));
    Session session(net);
    session.set_input(name, x);
    return session.get("y");
}

void expect_int32_sums(const Tensor& y, const std::vector<int64_t>& want)
{
    ASSERT_EQ(y.dtype(), DType::I32);
    ASSERT_EQ(static_cast<size_t>(y.numel()), want.size());
    for (int64_t i = 0; i < y.numel(); ++i) ASSERT_EQ(y.data<int32_t>()[i], want[static_cast<size_t>(i)]) << i;
}

// ConvInteger with constant int8 weights of zero zero point runs on the int8
// convolution (ONNX's form, int32 output): the exact integer sums.
TEST(OnnxQuantized, ConvIntegerWithSymmetricWeightsRunsOnTheInt8Convolution)
{
    for (const bool x_uint8 : {true, false}) {
        ConvShape s;
        s.group = 1, s.c = 36, s.m = 33; // 36 channels: the AMX/VNNI tiles where there are
        const Tensor x = x_uint8 ? random_ints<uint8_t>({s.n, s.c, s.h, s.w}, DType::U8, 0, 255, 41)
                                 : random_ints<int8_t>({s.n, s.c, s.h, s.w}, DType::I8, -128, 127, 41);
        const Tensor w = random_ints<int8_t>({s.m, s.c, s.k, s.k}, DType::I8, -128, 127, 42);
        const Tensor x_zp = x_uint8 ? random_ints<uint8_t>({}, DType::U8, 0, 255, 43)
                                    : random_ints<int8_t>({}, DType::I8, -128, 127, 43);
        const int type = x_uint8 ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
        OnnxGraph g(10);
        g.input("x", x.shape(), type);
        g.raw_init("w", w, onnx::TensorProto::INT8);
        g.raw_init("x_zp", x_zp, type);
        conv_attrs(g.node("ConvInteger", {"x", "w", "x_zp"}, {"y"}), s);
        g.output("y", 4, onnx::TensorProto::INT32);
        const Tensor y = run_on_int8_form(g, "x", x);
        ASSERT_EQ(y.shape(), (Shape{s.n, s.m, s.oh(), s.ow()}));
        expect_int32_sums(y, conv_integer_reference(s, x, w, x_zp, Tensor::zeros({s.m}, DType::I8), nullptr));
    }
}

// QLinearConv with constant int8 weights of zero zero point (ONNX Runtime's
// default for weights) runs on our int8 convolution (its ONNX form): exactly
// ONNX Runtime's arithmetic, the int32 sums and bias times the float32 factor
// x_scale * w_scale / y_scale, rounded half to even, plus the zero point,
// saturated. uint8 and int8 inputs and outputs, groups and depthwise, pads
// and strides, with and without a bias.
TEST(OnnxQuantized, QLinearConvWithSymmetricWeightsRunsOnTheInt8Convolution)
{
    struct Case {
        ConvShape s;
        bool x_uint8, y_uint8, bias;
    };
    ConvShape one_group, depthwise, deep;
    one_group.group = 1, one_group.c = 5, one_group.m = 7, one_group.stride = 1;
    depthwise.group = depthwise.c = depthwise.m = 6;
    deep.group = 1, deep.c = 40, deep.m = 33, deep.k = 3, deep.h = 7, deep.w = 6; // 40 channels: the AMX/VNNI tiles
    for (const Case& c : {Case{ConvShape{}, true, true, true}, Case{one_group, false, true, false},
                          Case{depthwise, true, false, true}, Case{deep, false, false, true}}) {
        const ConvShape& s = c.s;
        SCOPED_TRACE("group " + std::to_string(s.group) + (c.x_uint8 ? " uint8 x" : " int8 x") +
                     (c.y_uint8 ? " uint8 y" : " int8 y"));
        const Tensor x = c.x_uint8 ? random_ints<uint8_t>({s.n, s.c, s.h, s.w}, DType::U8, 0, 255, 21)
                                   : random_ints<int8_t>({s.n, s.c, s.h, s.w}, DType::I8, -128, 127, 21);
        const Tensor w = random_ints<int8_t>({s.m, s.c / s.group, s.k, s.k}, DType::I8, -128, 127, 22);
        const Tensor x_zp = c.x_uint8 ? random_ints<uint8_t>({}, DType::U8, 0, 255, 23)
                                      : random_ints<int8_t>({}, DType::I8, -128, 127, 23);
        const Tensor y_zp = c.y_uint8 ? random_ints<uint8_t>({}, DType::U8, 100, 150, 24)
                                      : random_ints<int8_t>({}, DType::I8, -20, 20, 24);
        const Tensor bias = random_ints<int32_t>({s.m}, DType::I32, -30000, 30000, 25);
        std::vector<float> ws;
        for (int64_t m = 0; m < s.m; ++m) ws.push_back(0.002f + 0.0007f * static_cast<float>(m));
        const Tensor x_scale = floats({0.031f}), y_scale = floats({0.37f}), w_scale = floats(ws);
        OnnxGraph g(10);
        const int x_type = c.x_uint8 ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
        const int y_type = c.y_uint8 ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
        g.input("x", x.shape(), x_type);
        g.raw_init("w", w, onnx::TensorProto::INT8);
        g.raw_init("xs", x_scale.reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("x_zp", x_zp, x_type);
        g.raw_init("ws", w_scale, onnx::TensorProto::FLOAT);
        g.raw_init("w_zp", Tensor::zeros({s.m}, DType::I8), onnx::TensorProto::INT8);
        g.raw_init("ys", y_scale.reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("y_zp", y_zp, y_type);
        std::vector<std::string> ins = {"x", "xs", "x_zp", "w", "ws", "w_zp", "ys", "y_zp"};
        if (c.bias) g.raw_init("b", bias, onnx::TensorProto::INT32), ins.push_back("b");
        conv_attrs(g.node("QLinearConv", ins, {"y"}), s);
        g.output("y", 4, y_type);
        const Net net = g.load(true);
        EXPECT_TRUE(has_int8_onnx_form(net)) << "expected our int8 convolution in ONNX's form";
        Session session(net);
        session.set_input("x", x);
        const Tensor y = session.get("y");
        ASSERT_EQ(y.dtype(), c.y_uint8 ? DType::U8 : DType::I8);
        // Written as .param/.bin and read back: the same bytes.
        Net reloaded;
        reloaded.load_param_mem(net.param_text());
        const std::vector<uint8_t> bin = net.model_bytes();
        reloaded.load_model_mem(bin.data(), bin.size());
        Session again(reloaded);
        again.set_input("x", x);
        const Tensor y2 = again.get("y");
        ASSERT_EQ(0, std::memcmp(y.raw(), y2.raw(), y.nbytes()));
        ASSERT_EQ(y.shape(), (Shape{s.n, s.m, s.oh(), s.ow()}));

        expect_qlinear_conv(y, s, x, w, x_zp, byte_value(y_zp, 0), c.y_uint8, c.bias ? &bias : nullptr,
                            x_scale.data<float>()[0], ws, y_scale.data<float>()[0]);
    }
}

// A QDQ convolution as ONNX Runtime's quantizer writes it (DequantizeLinear
// of uint8 x, of int8 weights per output channel and of an int32 bias in
// units of x_scale * w_scale, the Conv, QuantizeLinear) is run as the
// QLinearConv ONNX Runtime fuses it into: on the int8 convolution, with its
// integer arithmetic. A bias of another scale keeps the float operators.
TEST(OnnxQuantized, QdqConvolutionRunsAsQLinearConv)
{
    ConvShape s;
    s.group = 1, s.c = 8, s.m = 5;
    const Tensor x = random_ints<uint8_t>({s.n, s.c, s.h, s.w}, DType::U8, 0, 255, 31);
    const Tensor w = random_ints<int8_t>({s.m, s.c, s.k, s.k}, DType::I8, -127, 127, 32);
    const Tensor x_zp = random_ints<uint8_t>({}, DType::U8, 0, 255, 33), y_zp = random_ints<uint8_t>({}, DType::U8, 90, 160, 34);
    const Tensor bias = random_ints<int32_t>({s.m}, DType::I32, -20000, 20000, 35);
    const float xs = 0.023f, ys = 0.41f;
    const std::vector<float> ws = {0.003f, 0.0041f, 0.0027f, 0.0052f, 0.0033f};
    for (bool bias_of_its_scale : {true, false}) {
        SCOPED_TRACE(bias_of_its_scale ? "bias scale x_scale * w_scale" : "another bias scale");
        std::vector<float> bs;
        for (float v : ws) bs.push_back(bias_of_its_scale ? xs * v : xs * v * 1.5f);
        OnnxGraph g(13);
        g.input("x", x.shape(), onnx::TensorProto::UINT8);
        g.raw_init("xs", floats({xs}).reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("xz", x_zp, onnx::TensorProto::UINT8);
        g.raw_init("w", w, onnx::TensorProto::INT8);
        g.raw_init("ws", floats(ws), onnx::TensorProto::FLOAT);
        g.raw_init("b", bias, onnx::TensorProto::INT32);
        g.raw_init("bs", floats(bs), onnx::TensorProto::FLOAT);
        g.raw_init("ys", floats({ys}).reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("yz", y_zp, onnx::TensorProto::UINT8);
        g.node("DequantizeLinear", {"x", "xs", "xz"}, {"xf"});
        OnnxGraph::attr_int(g.node("DequantizeLinear", {"w", "ws"}, {"wf"}), "axis", 0);
        OnnxGraph::attr_int(g.node("DequantizeLinear", {"b", "bs"}, {"bf"}), "axis", 0);
        conv_attrs(g.node("Conv", {"xf", "wf", "bf"}, {"yf"}), s);
        g.node("QuantizeLinear", {"yf", "ys", "yz"}, {"y"});
        g.output("y", 4, onnx::TensorProto::UINT8);
        const Net net = g.load(true);
        EXPECT_EQ(has_int8_onnx_form(net), bias_of_its_scale);
        EXPECT_FALSE(has_int8_onnx_form(g.load(false))) << "--no-optimize keeps the operators as written";
        if (!bias_of_its_scale) continue;
        Session session(net);
        session.set_input("x", x);
        expect_qlinear_conv(session.get("y"), s, x, w, x_zp, byte_value(y_zp, 0), true, &bias, xs, ws, ys);
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

// A quantized matrix product's operands: rows of k values in A (uint8 or
// int8, any leading shape), int8 B (k, n) of zero zero point, scales.
struct ProductCase {
    Shape a_shape;
    int64_t n;
    bool a_uint8, y_uint8, per_column;
};

Tensor random_bytes(const Shape& s, bool uint8, uint32_t seed)
{
    return uint8 ? random_ints<uint8_t>(s, DType::U8, 0, 255, seed) : random_ints<int8_t>(s, DType::I8, -128, 127, seed);
}

int onnx_type(const Tensor& t) { return t.dtype() == DType::U8 ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8; }

// Integer sums of (a - a_zp) * B[., col] (+ bias[col]) per row of a and column, row-major.
std::vector<int64_t> product_reference(const Tensor& a, const Tensor& b, int a_zp, const Tensor* bias)
{
    const int64_t k = b.dim(0), n = b.dim(1), rows = a.numel() / k;
    std::vector<int64_t> acc;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < n; ++c) {
            int64_t sum = bias ? bias->data<int32_t>()[c] : 0;
            for (int64_t i = 0; i < k; ++i)
                sum += static_cast<int64_t>(byte_value(a, r * k + i) - a_zp) * value_at<int8_t>(b, i * n + c);
            acc.push_back(sum);
        }
    return acc;
}

// y against the requantized sums with ONNX Runtime's arithmetic (as expect_qlinear_conv), column c's w scale ws[c].
void expect_requantized_rows(const Tensor& y, const std::vector<int64_t>& acc, int64_t n, float a_scale,
                             const std::vector<float>& ws, float y_scale, int yz, bool y_uint8)
{
    const int lo = y_uint8 ? 0 : -128, hi = y_uint8 ? 255 : 127;
    ASSERT_EQ(static_cast<size_t>(y.numel()), acc.size());
    ASSERT_EQ(y.dtype(), y_uint8 ? DType::U8 : DType::I8);
    for (int64_t i = 0; i < y.numel(); ++i) {
        const int64_t c = i % n;
        const float factor = a_scale * ws[ws.size() == 1 ? 0 : static_cast<size_t>(c)] / y_scale;
        const float scaled = static_cast<float>(acc[static_cast<size_t>(i)]) * factor;
        const int want = static_cast<int>(std::min<double>(hi, std::max<double>(lo, std::nearbyint(scaled) + yz)));
        ASSERT_EQ(byte_value(y, i), want) << "output " << i << " (sum " << acc[static_cast<size_t>(i)] << ")";
    }
}

std::vector<float> column_scales(int64_t n, bool per_column)
{
    std::vector<float> ws;
    for (int64_t c = 0; c < (per_column ? n : 1); ++c) ws.push_back(0.0021f + 0.0003f * static_cast<float>(c % 7));
    return ws;
}

Shape with_last(Shape s, int64_t last)
{
    s.back() = last;
    return s;
}

// QLinearMatMul with constant int8 B of zero zero point runs on our int8
// InnerProduct (ONNX's form) with ONNX Runtime's arithmetic: one row and a
// 1-D A (the row dot products), many rows of 3-D A (the int8 GEMM), depths
// of odd length and of AMX blocks, uint8 and int8 in and out, scales of B
// per tensor and per column.
TEST(OnnxQuantized, QLinearMatMulWithSymmetricWeightsRunsOnTheInt8InnerProduct)
{
    for (const ProductCase& c : {ProductCase{{1, 37}, 33, true, true, true}, ProductCase{{37}, 5, false, true, false},
                                 ProductCase{{3, 5, 37}, 33, true, false, false},
                                 ProductCase{{2, 40, 200}, 70, false, false, true},
                                 ProductCase{{3, 200}, 19, false, true, true}}) {
        SCOPED_TRACE("A " + shape_str(c.a_shape) + " N " + std::to_string(c.n) + (c.a_uint8 ? " uint8 A" : " int8 A") +
                     (c.y_uint8 ? " uint8 y" : " int8 y"));
        const int64_t k = c.a_shape.back();
        const Tensor a = random_bytes(c.a_shape, c.a_uint8, 51);
        const Tensor b = random_ints<int8_t>({k, c.n}, DType::I8, -128, 127, 52);
        const Tensor a_zp = random_bytes({}, c.a_uint8, 53), y_zp = random_bytes({}, c.y_uint8, 54);
        const std::vector<float> ws = column_scales(c.n, c.per_column);
        const float as = 0.031f, ys = 0.37f;
        OnnxGraph g(10);
        g.input("a", a.shape(), onnx_type(a));
        g.raw_init("as", floats({as}).reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("a_zp", a_zp, onnx_type(a_zp));
        g.raw_init("b", b, onnx::TensorProto::INT8);
        g.raw_init("bs", c.per_column ? floats(ws) : floats(ws).reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("b_zp", c.per_column ? Tensor::zeros({c.n}, DType::I8) : Tensor::zeros({}, DType::I8),
                   onnx::TensorProto::INT8);
        g.raw_init("ys", floats({ys}).reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("y_zp", y_zp, onnx_type(y_zp));
        g.node("QLinearMatMul", {"a", "as", "a_zp", "b", "bs", "b_zp", "ys", "y_zp"}, {"y"});
        g.output("y", static_cast<int>(c.a_shape.size()), onnx_type(y_zp));
        const Tensor y = run_on_int8_form(g, "a", a);
        ASSERT_EQ(y.shape(), with_last(c.a_shape, c.n));
        expect_requantized_rows(y, product_reference(a, b, byte_value(a_zp, 0), nullptr), c.n, as, ws, ys,
                                byte_value(y_zp, 0), c.y_uint8);
    }
}

// MatMulInteger with constant int8 B of zero zero point: the exact int32 sums
// on the int8 InnerProduct, with and without A's zero point, few and many rows.
TEST(OnnxQuantized, MatMulIntegerWithSymmetricWeightsRunsOnTheInt8InnerProduct)
{
    for (const ProductCase& c : {ProductCase{{2, 45}, 21, true, false, false}, ProductCase{{4, 6, 130}, 40, false, false, false}})
        for (const bool with_zp : {true, false}) {
            SCOPED_TRACE("A " + shape_str(c.a_shape) + (with_zp ? " with a zero point" : ""));
            const int64_t k = c.a_shape.back();
            const Tensor a = random_bytes(c.a_shape, c.a_uint8, 61);
            const Tensor b = random_ints<int8_t>({k, c.n}, DType::I8, -128, 127, 62);
            const Tensor a_zp = random_bytes({}, c.a_uint8, 63);
            OnnxGraph g(10);
            g.input("a", a.shape(), onnx_type(a));
            g.raw_init("b", b, onnx::TensorProto::INT8);
            g.raw_init("a_zp", a_zp, onnx_type(a_zp));
            g.node("MatMulInteger", with_zp ? std::vector<std::string>{"a", "b", "a_zp"} : std::vector<std::string>{"a", "b"},
                   {"y"});
            g.output("y", static_cast<int>(c.a_shape.size()), onnx::TensorProto::INT32);
            const Tensor y = run_on_int8_form(g, "a", a);
            ASSERT_EQ(y.shape(), with_last(c.a_shape, c.n));
            expect_int32_sums(y, product_reference(a, b, with_zp ? byte_value(a_zp, 0) : 0, nullptr));
        }
}

// ONNX Runtime's dynamic quantization: DynamicQuantizeLinear(x) ->
// MatMulInteger(x_q, int8 B, x_zero_point): the zero point known only at run
// time is the int8 InnerProduct's second input. Exact against the integer
// sums of the x_q and zero point the graph gives (few and many rows), and
// with the zero point a graph input.
TEST(OnnxQuantized, MatMulIntegerWithRunTimeZeroPointRunsOnTheInt8InnerProduct)
{
    const int64_t k = 40, n = 12;
    const Tensor b = random_ints<int8_t>({k, n}, DType::I8, -128, 127, 91);
    for (const int64_t rows : {int64_t(2), int64_t(9)}) {
        SCOPED_TRACE(std::to_string(rows) + " rows");
        Tensor x({rows, k}, DType::F32);
        std::mt19937 rng(92);
        std::uniform_real_distribution<float> d(-3.f, 5.f);
        for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = d(rng);
        OnnxGraph g(13);
        g.input("x", x.shape());
        g.raw_init("b", b, onnx::TensorProto::INT8);
        g.node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
        g.node("MatMulInteger", {"xq", "b", "xz"}, {"y"});
        g.output("y", 2, onnx::TensorProto::INT32);
        g.output("xq", 2, onnx::TensorProto::UINT8);
        g.output("xz", 0, onnx::TensorProto::UINT8);
        const Net net = g.load(true);
        EXPECT_TRUE(has_int8_onnx_form(net));
        Session session(net);
        session.set_input("x", x);
        const Tensor xq = session.get("xq"), xz = session.get("xz");
        ASSERT_GT(value_at<uint8_t>(xz, 0), 0) << "a zero point other than 0 (x has negative values)";
        expect_int32_sums(session.get("y"), product_reference(xq, b, value_at<uint8_t>(xz, 0), nullptr));
    }
    const Tensor a = random_ints<int8_t>({5, k}, DType::I8, -128, 127, 93), a_zp = random_ints<int8_t>({}, DType::I8, -9, 9, 94);
    OnnxGraph g(10);
    g.input("a", a.shape(), onnx::TensorProto::INT8);
    g.input("a_zp", {}, onnx::TensorProto::INT8);
    g.raw_init("b", b, onnx::TensorProto::INT8);
    g.node("MatMulInteger", {"a", "b", "a_zp"}, {"y"});
    g.output("y", 2, onnx::TensorProto::INT32);
    const Net net = g.load(true);
    EXPECT_TRUE(has_int8_onnx_form(net));
    Session session(net);
    session.set_input("a", a);
    session.set_input("a_zp", a_zp);
    expect_int32_sums(session.get("y"), product_reference(a, b, value_at<int8_t>(a_zp, 0), nullptr));
}

// The QDQ graph of a MatMul or a Gemm (transB, an int32 bias per output in
// units of a_scale * w_scale) as ONNX Runtime's quantizer writes it runs as
// the QLinearMatMul / QGemm ONNX Runtime fuses it into: on the int8
// InnerProduct, with their integer arithmetic.
TEST(OnnxQuantized, QdqMatMulAndGemmRunAsQLinearMatMulAndQGemm)
{
    const int64_t rows = 6, k = 24, n = 10;
    const Tensor a = random_ints<uint8_t>({rows, k}, DType::U8, 0, 255, 71);
    const Tensor b = random_ints<int8_t>({k, n}, DType::I8, -127, 127, 72);
    const Tensor a_zp = random_ints<uint8_t>({}, DType::U8, 0, 255, 73), y_zp = random_ints<uint8_t>({}, DType::U8, 90, 160, 74);
    const Tensor bias = random_ints<int32_t>({n}, DType::I32, -20000, 20000, 75);
    const std::vector<float> ws = column_scales(n, true);
    const float as = 0.023f, ys = 0.41f;
    for (const bool gemm : {false, true}) {
        SCOPED_TRACE(gemm ? "Gemm" : "MatMul");
        OnnxGraph g(13);
        g.input("a", a.shape(), onnx::TensorProto::UINT8);
        g.raw_init("as", floats({as}).reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("az", a_zp, onnx::TensorProto::UINT8);
        Tensor bt({n, k}, DType::I8); // Gemm's B, transposed
        for (int64_t o = 0; o < n; ++o)
            for (int64_t i = 0; i < k; ++i) bt.data<int8_t>()[o * k + i] = b.data<int8_t>()[i * n + o];
        g.raw_init("w", gemm ? bt : b, onnx::TensorProto::INT8);
        g.raw_init("ws", floats(ws), onnx::TensorProto::FLOAT);
        g.raw_init("ys", floats({ys}).reshaped({}), onnx::TensorProto::FLOAT);
        g.raw_init("yz", y_zp, onnx::TensorProto::UINT8);
        g.node("DequantizeLinear", {"a", "as", "az"}, {"af"});
        OnnxGraph::attr_int(g.node("DequantizeLinear", {"w", "ws"}, {"wf"}), "axis", gemm ? 0 : 1);
        if (gemm) {
            std::vector<float> bs;
            for (float v : ws) bs.push_back(as * v);
            g.raw_init("b", bias, onnx::TensorProto::INT32);
            g.raw_init("bs", floats(bs), onnx::TensorProto::FLOAT);
            OnnxGraph::attr_int(g.node("DequantizeLinear", {"b", "bs"}, {"bf"}), "axis", 0);
            OnnxGraph::attr_int(g.node("Gemm", {"af", "wf", "bf"}, {"yf"}), "transB", 1);
        } else {
            g.node("MatMul", {"af", "wf"}, {"yf"});
        }
        g.node("QuantizeLinear", {"yf", "ys", "yz"}, {"y"});
        g.output("y", 2, onnx::TensorProto::UINT8);
        EXPECT_FALSE(has_int8_onnx_form(g.load(false))) << "--no-optimize keeps the operators as written";
        const Tensor y = run_on_int8_form(g, "a", a);
        ASSERT_EQ(y.shape(), (Shape{rows, n}));
        expect_requantized_rows(y, product_reference(a, b, byte_value(a_zp, 0), gemm ? &bias : nullptr), n, as, ws, ys,
                                byte_value(y_zp, 0), true);
    }
}

// ONNX Runtime's QGemm where the int8 layer does not take it (alpha != 1, a
// float output: no y_scale) runs on the float operators: the dequantized
// product times alpha plus the bias.
TEST(OnnxQuantized, QGemmWithAlphaAndFloatOutputIsLoweredToFloats)
{
    const int64_t rows = 3, k = 11, n = 4;
    const Tensor a = random_ints<int8_t>({rows, k}, DType::I8, -128, 127, 81);
    const Tensor b = random_ints<int8_t>({k, n}, DType::I8, -128, 127, 82);
    const Tensor bias = random_ints<int32_t>({n}, DType::I32, -500, 500, 83);
    const Tensor a_zp = random_ints<int8_t>({}, DType::I8, -10, 10, 84);
    const float as = 0.05f, bs = 0.02f, alpha = 0.5f;
    OnnxGraph g(13);
    g.import_domain("com.microsoft", 1);
    g.input("a", a.shape(), onnx::TensorProto::INT8);
    g.raw_init("as", floats({as}).reshaped({}), onnx::TensorProto::FLOAT);
    g.raw_init("az", a_zp, onnx::TensorProto::INT8);
    g.raw_init("b", b, onnx::TensorProto::INT8);
    g.raw_init("bs", floats({bs}).reshaped({}), onnx::TensorProto::FLOAT);
    g.raw_init("bz", Tensor::zeros({}, DType::I8), onnx::TensorProto::INT8);
    g.raw_init("c", bias, onnx::TensorProto::INT32);
    onnx::NodeProto* q = g.node("QGemm", {"a", "as", "az", "b", "bs", "bz", "c"}, {"y"});
    q->set_domain("com.microsoft");
    OnnxGraph::attr_float(q, "alpha", alpha);
    g.output("y", 2, onnx::TensorProto::FLOAT);
    const Net net = g.load(true);
    EXPECT_FALSE(has_int8_onnx_form(net));
    Session session(net);
    session.set_input("a", a);
    const Tensor y = session.get("y");
    ASSERT_EQ(y.shape(), (Shape{rows, n}));
    ASSERT_EQ(y.dtype(), DType::F32);
    const std::vector<int64_t> acc = product_reference(a, b, byte_value(a_zp, 0), nullptr);
    for (int64_t i = 0; i < y.numel(); ++i) {
        const double want = alpha * as * bs * static_cast<double>(acc[static_cast<size_t>(i)]) +
                            as * bs * bias.data<int32_t>()[i % n];
        ASSERT_NEAR(y.data<float>()[i], want, 1e-4 * (1 + std::abs(want))) << i;
    }
}

} // namespace
} // namespace kestrel
#endif // KESTREL_HAVE_ONNX
