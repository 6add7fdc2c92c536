// Graph optimizer passes: each rewrite keeps outputs equal to the unoptimized graph.
#include <cstring>
#include <random>

#include "graph/graph.h"
#include "reference_util.h"

namespace kestrel {
namespace {

Tensor random_tensor(Shape shape, uint32_t seed, float lo = -1.f, float hi = 1.f)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    Tensor t(std::move(shape), DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    return t;
}

// A padded 3x3 Convolution with bias: `inputs` -> 4 channels.
ParamDict conv3x3_to_4(int inputs)
{
    ParamDict conv;
    conv.set_int(0, 4);
    conv.set_int(1, 3);
    conv.set_int(4, 1);
    conv.set_int(5, 1);
    conv.set_int(6, 4 * inputs * 9);
    return conv;
}

// input -> Conv(3->4, 3x3, bias) -> BatchNorm -> ReLU -> Noop -> ConvDW(4, 3x3, no bias) -> BatchNorm -> Clip
// plus a dead branch and a Constant -> ReLU chain added to the output.
void build(Net& net)
{
    const ParamDict conv = conv3x3_to_4(3);
    ParamDict bn;
    bn.set_int(0, 4);
    bn.set_float(1, 1e-5f);
    ParamDict dw;
    dw.set_int(0, 4);
    dw.set_int(1, 3);
    dw.set_int(6, 4 * 9);
    dw.set_int(7, 4);
    dw.set_int(4, 1);
    ParamDict clip;
    clip.set_float(0, -0.5f);
    clip.set_float(1, 0.8f);
    ParamDict cst;
    cst.set_int(0, static_cast<int>(DType::F32));
    cst.set_ints(1, {4, 6, 6});
    ParamDict sum;
    sum.set_int(0, 1);
    auto bn_weights = [](uint32_t seed) {
        return std::vector<Tensor>{random_tensor({4}, seed, 0.5f, 1.5f), random_tensor({4}, seed + 1),
                                   random_tensor({4}, seed + 2, 0.1f, 2.f), random_tensor({4}, seed + 3)};
    };
    net.add_layer("Input", "in", {}, {"x"});
    net.add_layer("Convolution", "conv", {"x"}, {"c1"}, conv, {random_tensor({4 * 3 * 9}, 1), random_tensor({4}, 2)});
    net.add_layer("BatchNorm", "bn1", {"c1"}, {"b1"}, bn, bn_weights(10));
    net.add_layer("ReLU", "relu", {"b1"}, {"r1"});
    net.add_layer("Noop", "noop", {"r1"}, {"n1"});
    net.add_layer("ConvolutionDepthWise", "dw", {"n1"}, {"c2"}, dw, {random_tensor({4 * 9}, 3)});
    net.add_layer("BatchNorm", "bn2", {"c2"}, {"b2"}, bn, bn_weights(20));
    net.add_layer("Clip", "clip", {"b2"}, {"y0"}, clip);
    net.add_layer("Sigmoid", "dead", {"n1"}, {"unused"});
    net.add_layer("Constant", "k", {}, {"k"}, cst, {random_tensor({4, 6, 6}, 4)});
    net.add_layer("ReLU", "krelu", {"k"}, {"kr"});
    net.add_layer("Eltwise", "add", {"y0", "kr"}, {"y"}, sum);
    net.set_output_names({"y"});
}

TEST(Optimizer, RewritesConvBatchNormActivationChainsWithEqualOutputs)
{
    Net plain, optimized;
    build(plain);
    build(optimized);
    const std::vector<std::string> applied = optimized.optimize();
    const auto has = [&](const std::string& what) {
        for (const auto& a : applied)
            if (a.find(what) != std::string::npos) return true;
        return false;
    };
    EXPECT_TRUE(has("folded BatchNorm 'bn1' into Convolution 'conv'"));
    EXPECT_TRUE(has("folded BatchNorm 'bn2' into ConvolutionDepthWise 'dw'"));
    EXPECT_TRUE(has("fused ReLU 'relu'"));
    EXPECT_TRUE(has("fused Clip 'clip'"));
    EXPECT_TRUE(has("removed Noop 'noop'"));
    EXPECT_TRUE(has("folded ReLU 'krelu'"));
    EXPECT_TRUE(has("removed unused Sigmoid 'dead'"));
    std::vector<std::string> types;
    for (const Layer& l : optimized.graph().layers) types.push_back(l.type);
    EXPECT_EQ(types, std::vector<std::string>({"Input", "Constant", "Convolution", "ConvolutionDepthWise", "Eltwise"}));

    const Tensor x = random_tensor({3, 6, 6}, 99);
    Session a(plain), b(optimized);
    a.set_input("x", x);
    b.set_input("x", x);
    testing::expect_close_to_reference(b.get("y"), a.get("y"), 1e-5);
}

// Conv -> x * 1.7 -> x + 0.3 -> x - 0.1 -> HardSwish (PaddleOCR's learnable
// affine blocks): the three scalar BinaryOps fold into the conv, then the
// HardSwish fuses into it. And a scalar op the conv's output is not the left
// operand of (0.5 - x, ncnn's reversed subtract) is left alone.
TEST(Optimizer, FoldsScalarAffineOpsIntoConvolutions)
{
    const auto build_affine = [](Net& net) {
        const ParamDict conv = conv3x3_to_4(3);
        const auto scalar = [](int op, float c) {
            ParamDict pd;
            pd.set_int(0, op);
            pd.set_int(1, 1);
            pd.set_float(2, c);
            return pd;
        };
        ParamDict hs;
        hs.set_float(0, 1.f / 6.f);
        hs.set_float(1, 0.5f);
        net.add_layer("Input", "in", {}, {"x"});
        net.add_layer("Convolution", "conv", {"x"}, {"c"}, conv, {random_tensor({4 * 3 * 9}, 1), random_tensor({4}, 2)});
        net.add_layer("BinaryOp", "mul", {"c"}, {"m"}, scalar(2, 1.7f));
        net.add_layer("BinaryOp", "add", {"m"}, {"a"}, scalar(0, 0.3f));
        net.add_layer("BinaryOp", "sub", {"a"}, {"s"}, scalar(1, 0.1f));
        net.add_layer("HardSwish", "hs", {"s"}, {"h"}, hs);
        net.add_layer("Convolution", "conv2", {"h"}, {"c2"}, conv3x3_to_4(4), {random_tensor({4 * 4 * 9}, 3), random_tensor({4}, 4)});
        net.add_layer("BinaryOp", "rsub", {"c2"}, {"y"}, scalar(7, 0.5f));
        net.set_output_names({"y"});
    };
    Net plain, optimized;
    build_affine(plain);
    build_affine(optimized);
    const std::vector<std::string> applied = optimized.optimize();
    std::vector<std::string> types;
    for (const Layer& l : optimized.graph().layers) types.push_back(l.type);
    EXPECT_EQ(types, std::vector<std::string>({"Input", "Convolution", "Convolution", "BinaryOp"}));
    EXPECT_EQ(optimized.graph().layers[1].params.get_int(9, 0), 6) << "HardSwish fused";

    const Tensor x = random_tensor({3, 9, 9}, 99);
    Session a(plain), b(optimized);
    a.set_input("x", x);
    b.set_input("x", x);
    testing::expect_close_to_reference(b.get("y"), a.get("y"), 1e-5);
}

// `net` loaded from `source`'s param text and weights, with or without LoadOptions::fuse_layers.
void load_with_fusion(Net& source, Net& net, bool fuse)
{
    const std::string param = source.param_text();
    const std::vector<uint8_t> bin = source.model_bytes();
    LoadOptions lo;
    lo.fuse_layers = fuse;
    net.set_load_options(lo);
    net.load_param_mem(param);
    net.load_model_mem(bin.data(), bin.size());
}

// Both nets give the same bits for `outputs` from input "x". Both plans keep
// plain layouts: the fused layers would otherwise form blocked chains (no
// Padding between them) and take the direct tile, which sums in another
// order than the plain kernels.
void expect_same_bits(Net& plain, Net& fused, const Tensor& x, const std::vector<const char*>& outputs)
{
    Options options;
    options.blocked_layouts = false;
    Session a(plain, options), b(fused, options);
    a.set_input("x", x);
    b.set_input("x", x);
    for (const char* out : outputs) {
        const Tensor ya = a.get(out), yb = b.get(out);
        ASSERT_EQ(ya.shape(), yb.shape());
        EXPECT_EQ(std::memcmp(ya.data<float>(), yb.data<float>(), ya.nbytes()), 0) << out << " changed by the fusion";
    }
}

// LoadOptions::fuse_layers: an ncnn model loaded with it runs the
// activations inside the convolutions (Swish included, Kestrel's activation
// type 7) and gives the same bits; an InnerProduct keeps its Swish, and an
// activation whose input another layer also reads stays.
TEST(Optimizer, LoadTimeActivationFusionKeepsTheBits)
{
    Net source;
    ParamDict dw;
    dw.set_int(0, 4);
    dw.set_int(1, 3);
    dw.set_int(4, 1);
    dw.set_int(5, 1);
    dw.set_int(6, 4 * 9);
    dw.set_int(7, 4);
    ParamDict ip;
    ip.set_int(0, 5);
    ip.set_int(1, 1);
    ip.set_int(2, 5 * 4 * 6 * 6);
    source.add_layer("Input", "in", {}, {"x"});
    source.add_layer("Convolution", "conv", {"x"}, {"c"}, conv3x3_to_4(3), {random_tensor({4 * 3 * 9}, 1, -3.f, 3.f), random_tensor({4}, 2)});
    source.add_layer("Swish", "swish", {"c"}, {"s"});
    source.add_layer("ConvolutionDepthWise", "dw", {"s"}, {"d"}, dw, {random_tensor({4 * 9}, 3, -3.f, 3.f), random_tensor({4}, 4)});
    source.add_layer("Mish", "mish", {"d"}, {"m"});
    source.add_layer("Split", "split", {"m"}, {"m1", "m2"});
    source.add_layer("Convolution", "conv2", {"m1"}, {"c2"}, conv3x3_to_4(4), {random_tensor({4 * 4 * 9}, 5), random_tensor({4}, 6)});
    source.add_layer("HardSwish", "hs", {"c2"}, {"h"});
    source.add_layer("InnerProduct", "fc", {"h"}, {"f"}, ip, {random_tensor({5 * 4 * 6 * 6}, 7), random_tensor({5}, 8)});
    source.add_layer("Swish", "fc_swish", {"f"}, {"y"});
    source.add_layer("Sigmoid", "side", {"m2"}, {"z"});
    source.finish_graph();
    Net plain, fused;
    load_with_fusion(source, plain, false);
    load_with_fusion(source, fused, true);
    std::vector<std::string> types;
    for (const Layer& l : fused.graph().layers) types.push_back(l.type + (l.params.has(9) ? "+" + std::to_string(l.params.get_int(9, 0)) : ""));
    EXPECT_EQ(types, std::vector<std::string>({"Input", "Convolution+7", "ConvolutionDepthWise+5", "Split", "Convolution+6",
                                               "InnerProduct", "Swish", "Sigmoid"}));
    expect_same_bits(plain, fused, random_tensor({3, 6, 6}, 99, -2.f, 2.f), {"y", "z"});
}

// LoadOptions::fuse_layers: a constant Padding of rows and columns goes into
// the convolution that alone reads it (its pads added to the convolution's,
// its value the convolution's pad value), with the same bits; a padding of
// channels, one whose value differs from the convolution's own padding, and
// one another layer also reads stay.
TEST(Optimizer, LoadTimePaddingFusionKeepsTheBits)
{
    const auto padding = [](int top, int bottom, int left, int right, float value, int behind = 0) {
        ParamDict p;
        p.set_int(0, top), p.set_int(1, bottom), p.set_int(2, left), p.set_int(3, right);
        p.set_float(5, value);
        if (behind) p.set_int(8, behind);
        return p;
    };
    ParamDict strided = conv3x3_to_4(3); // own pads 1, stride 2 on rows and columns
    strided.set_int(3, 2);
    ParamDict dw;
    dw.set_int(0, 4), dw.set_int(1, 3), dw.set_int(4, 0), dw.set_int(5, 1), dw.set_int(6, 4 * 9), dw.set_int(7, 4);
    ParamDict own_value = conv3x3_to_4(4); // pads 1 of 0.5
    own_value.set_float(18, 0.5f);
    Net source;
    source.add_layer("Input", "in", {}, {"x"});
    source.add_layer("Padding", "pad1", {"x"}, {"p1"}, padding(1, 2, 0, 3, 0.f));
    source.add_layer("Convolution", "conv1", {"p1"}, {"c1"}, strided, {random_tensor({4 * 3 * 9}, 1), random_tensor({4}, 2)});
    source.add_layer("Padding", "pad2", {"c1"}, {"p2"}, padding(2, 0, 1, 1, 0.75f));
    source.add_layer("ConvolutionDepthWise", "dw", {"p2"}, {"d"}, dw, {random_tensor({4 * 9}, 3), random_tensor({4}, 4)});
    source.add_layer("Padding", "pad3", {"d"}, {"p3"}, padding(1, 1, 1, 1, 0.5f));
    source.add_layer("Convolution", "same_value", {"p3"}, {"s"}, own_value, {random_tensor({4 * 4 * 9}, 5), random_tensor({4}, 6)});
    source.add_layer("Padding", "pad4", {"s"}, {"p4"}, padding(0, 1, 1, 0, 0.25f));
    source.add_layer("Convolution", "other_value", {"p4"}, {"o"}, conv3x3_to_4(4), {random_tensor({4 * 4 * 9}, 7), random_tensor({4}, 8)});
    source.add_layer("Padding", "channels", {"o"}, {"p5"}, padding(0, 0, 0, 0, 0.f, 2));
    source.add_layer("Convolution", "wider", {"p5"}, {"w"}, conv3x3_to_4(6), {random_tensor({4 * 6 * 9}, 9), random_tensor({4}, 10)});
    source.add_layer("Padding", "pad6", {"w"}, {"p6"}, padding(1, 0, 0, 1, 0.f));
    source.add_layer("Split", "split", {"p6"}, {"p6a", "p6b"});
    source.add_layer("Convolution", "shared", {"p6a"}, {"y"}, conv3x3_to_4(4), {random_tensor({4 * 4 * 9}, 11), random_tensor({4}, 12)});
    source.add_layer("Sigmoid", "side", {"p6b"}, {"z"});
    source.finish_graph();
    Net plain, fused;
    load_with_fusion(source, plain, false);
    load_with_fusion(source, fused, true);
    std::vector<std::string> types;
    for (const Layer& l : fused.graph().layers) types.push_back(l.type);
    EXPECT_EQ(types, std::vector<std::string>({"Input", "Convolution", "ConvolutionDepthWise", "Convolution", "Padding",
                                               "Convolution", "Padding", "Convolution", "Padding", "Split",
                                               "Convolution", "Sigmoid"}));
    expect_same_bits(plain, fused, random_tensor({3, 13, 11}, 99, -2.f, 2.f), {"y", "z"});
}

// LoadOptions::fuse_layers: an Eltwise sum of a convolution's output and
// another blob becomes the convolution's residual input (added before its
// activation, and the activation after the sum fused too), on every float
// path: GEMM, Winograd, depthwise, grouped; the same bits. A weighted sum, a
// product, a convolution with its own activation, and one whose output
// another layer reads stay; of two convolutions the later takes the other's
// output.
TEST(Optimizer, LoadTimeResidualFusionKeepsTheBits)
{
    const auto conv = [](int outputs, int inputs, int kernel, int group = 1, int activation = 0) {
        ParamDict p;
        p.set_int(0, outputs), p.set_int(1, kernel), p.set_int(4, kernel / 2), p.set_int(5, 1);
        p.set_int(6, outputs * inputs / group * kernel * kernel);
        if (group > 1) p.set_int(7, group);
        if (activation) p.set_int(9, activation);
        return p;
    };
    const auto eltwise = [](int op, std::vector<float> coeffs = {}) {
        ParamDict p;
        p.set_int(0, op);
        if (!coeffs.empty()) p.set_floats(1, coeffs);
        return p;
    };
    uint32_t seed = 1;
    const auto weights = [&](const ParamDict& p) {
        seed += 2;
        return std::vector<Tensor>{random_tensor({p.get_int(6, 0)}, seed, -0.3f, 0.3f),
                                   random_tensor({p.get_int(0, 0)}, seed + 1)};
    };
    ParamDict clip;
    clip.set_float(0, -0.5f), clip.set_float(1, 0.75f);
    Net source;
    source.add_layer("Input", "in", {}, {"x"});
    const ParamDict stem = conv(32, 3, 3, 1, 1), pointwise = conv(32, 32, 1), wide = conv(32, 32, 3);
    const ParamDict depthwise = conv(32, 32, 3, 32), grouped = conv(32, 32, 3, 16), relu_conv = conv(32, 32, 1, 1, 1);
    source.add_layer("Convolution", "stem", {"x"}, {"a"}, stem, weights(stem));
    source.add_layer("Split", "split_a", {"a"}, {"a1", "a2"});
    source.add_layer("Convolution", "gemm", {"a1"}, {"c1"}, pointwise, weights(pointwise));
    source.add_layer("Eltwise", "sum1", {"c1", "a2"}, {"s1"}, eltwise(1));
    source.add_layer("ReLU", "relu1", {"s1"}, {"r1"});
    source.add_layer("Split", "split_r1", {"r1"}, {"r1a", "r1b"});
    source.add_layer("Convolution", "winograd", {"r1a"}, {"c2"}, wide, weights(wide));
    source.add_layer("Eltwise", "sum2", {"r1b", "c2"}, {"s2"}, eltwise(1, {1.f, 1.f}));
    source.add_layer("Split", "split_s2", {"s2"}, {"s2a", "s2b"});
    source.add_layer("ConvolutionDepthWise", "depthwise", {"s2a"}, {"c3"}, depthwise, weights(depthwise));
    source.add_layer("Eltwise", "sum3", {"c3", "s2b"}, {"s3"}, eltwise(1));
    source.add_layer("Clip", "clip3", {"s3"}, {"r3"}, clip);
    source.add_layer("Split", "split_r3", {"r3"}, {"r3a", "r3b"});
    source.add_layer("ConvolutionDepthWise", "grouped", {"r3a"}, {"c4"}, grouped, weights(grouped));
    source.add_layer("Eltwise", "sum4", {"c4", "r3b"}, {"s4"}, eltwise(1));
    source.add_layer("Split", "split_s4", {"s4"}, {"s4a", "s4b", "s4c", "s4d", "s4e", "s4f"});
    source.add_layer("Convolution", "left", {"s4a"}, {"c5"}, pointwise, weights(pointwise));
    source.add_layer("Convolution", "right", {"s4b"}, {"c6"}, pointwise, weights(pointwise));
    source.add_layer("Eltwise", "two_convs", {"c5", "c6"}, {"s5"}, eltwise(1));
    source.add_layer("Convolution", "weighted", {"s4c"}, {"c7"}, pointwise, weights(pointwise));
    source.add_layer("Eltwise", "sum_weighted", {"c7", "s5"}, {"s7"}, eltwise(1, {2.f, 1.f}));
    source.add_layer("Convolution", "product", {"s4d"}, {"c8"}, pointwise, weights(pointwise));
    source.add_layer("Eltwise", "prod", {"c8", "s7"}, {"s8"}, eltwise(0));
    source.add_layer("Convolution", "activated", {"s4e"}, {"c9"}, relu_conv, weights(relu_conv));
    source.add_layer("Eltwise", "sum_activated", {"c9", "s8"}, {"s9"}, eltwise(1));
    source.add_layer("Convolution", "read_twice", {"s4f"}, {"c10"}, pointwise, weights(pointwise));
    source.add_layer("Split", "split_c10", {"c10"}, {"c10a", "c10b"});
    source.add_layer("Eltwise", "sum_read_twice", {"c10a", "s9"}, {"y"}, eltwise(1));
    source.add_layer("Sigmoid", "side", {"c10b"}, {"z"});
    source.finish_graph();
    Net plain, fused;
    load_with_fusion(source, plain, false);
    load_with_fusion(source, fused, true);
    std::vector<std::string> with_residual, sums;
    for (const Layer& l : fused.graph().layers) {
        if (l.params.get_int(20, 0) == 1) with_residual.push_back(l.name);
        if (l.type == "Eltwise") sums.push_back(l.name);
    }
    EXPECT_EQ(with_residual, std::vector<std::string>({"gemm", "winograd", "depthwise", "grouped", "right"}));
    EXPECT_EQ(sums, std::vector<std::string>({"sum_weighted", "prod", "sum_activated", "sum_read_twice"}));
    expect_same_bits(plain, fused, random_tensor({3, 24, 24}, 99, -2.f, 2.f), {"y", "z"});
}

// The same for int8 convolutions with a float output (int8_scale_term 1 or
// 2: the residual is added to the dequantized values, ncnn's int8 ResNets);
// a requantized one (102) keeps its sum.
TEST(Optimizer, LoadTimeResidualFusionOfInt8ConvolutionsKeepsTheBits)
{
    const auto conv = [](int outputs, int inputs, int kernel, int group, int term) {
        ParamDict p;
        p.set_int(0, outputs), p.set_int(1, kernel), p.set_int(4, kernel / 2), p.set_int(5, 1);
        p.set_int(6, outputs * inputs / group * kernel * kernel), p.set_int(8, term);
        if (group > 1) p.set_int(7, group);
        return p;
    };
    uint32_t seed = 1;
    const auto weights = [&](const ParamDict& p) {
        seed += 3;
        const int outputs = p.get_int(0, 0), scales = p.get_int(8, 0) % 100 == 1 ? p.get_int(7, 1) : outputs;
        std::vector<Tensor> w = {random_tensor({p.get_int(6, 0)}, seed, -0.3f, 0.3f), random_tensor({outputs}, seed + 1),
                                 random_tensor({scales}, seed + 2, 100.f, 400.f), random_tensor({1}, seed + 3, 30.f, 50.f)};
        if (p.get_int(8, 0) > 100) w.push_back(random_tensor({1}, seed + 4, 20.f, 40.f));
        return w;
    };
    ParamDict eltwise;
    eltwise.set_int(0, 1);
    const ParamDict stem = conv(32, 3, 3, 1, 2), pointwise = conv(32, 32, 1, 1, 2), wide = conv(32, 32, 3, 1, 2);
    const ParamDict depthwise = conv(32, 32, 3, 32, 1), requantized = conv(32, 32, 1, 1, 102);
    Net source;
    source.add_layer("Input", "in", {}, {"x"});
    source.add_layer("Convolution", "stem", {"x"}, {"a"}, stem, weights(stem));
    source.add_layer("Split", "split_a", {"a"}, {"a1", "a2"});
    source.add_layer("Convolution", "pointwise", {"a1"}, {"c1"}, pointwise, weights(pointwise));
    source.add_layer("Eltwise", "sum1", {"c1", "a2"}, {"s1"}, eltwise);
    source.add_layer("ReLU", "relu1", {"s1"}, {"r1"});
    source.add_layer("Split", "split_r1", {"r1"}, {"r1a", "r1b"});
    source.add_layer("Convolution", "wide", {"r1a"}, {"c2"}, wide, weights(wide));
    source.add_layer("Eltwise", "sum2", {"r1b", "c2"}, {"s2"}, eltwise);
    source.add_layer("Split", "split_s2", {"s2"}, {"s2a", "s2b", "s2c"});
    source.add_layer("ConvolutionDepthWise", "depthwise", {"s2a"}, {"c3"}, depthwise, weights(depthwise));
    source.add_layer("Eltwise", "sum3", {"c3", "s2b"}, {"s3"}, eltwise);
    source.add_layer("ReLU", "relu3", {"s3"}, {"y"});
    source.add_layer("Convolution", "requantized", {"s2c"}, {"q"}, requantized, weights(requantized));
    source.add_layer("Convolution", "reader", {"q"}, {"z"}, pointwise, weights(pointwise));
    source.finish_graph();
    Net plain, fused;
    load_with_fusion(source, plain, false);
    load_with_fusion(source, fused, true);
    std::vector<std::string> with_residual;
    for (const Layer& l : fused.graph().layers)
        if (l.params.get_int(20, 0) == 1) with_residual.push_back(l.name);
    EXPECT_EQ(with_residual, std::vector<std::string>({"pointwise", "wide", "depthwise"}));
    EXPECT_EQ(fused.graph().layers.size(), plain.graph().layers.size() - 5); // 3 sums, 2 ReLUs
    expect_same_bits(plain, fused, random_tensor({3, 20, 20}, 99, -2.f, 2.f), {"y", "z"});
}

TEST(Optimizer, SharedModelsKeepTheirOutputs)
{
    for (const char* model : {"mobilenet_v2", "resnet18"}) {
        const std::string dir = testing::shared_path(std::string("models/") + model + "/");
        Net net;
        net.load_param(dir + "ncnn.param");
        net.load_model(dir + "ncnn.bin");
        const size_t before = net.graph().layers.size();
        net.optimize();
        EXPECT_LT(net.graph().layers.size(), before) << model;
        Session s(net);
        s.set_input("input", read_npy(dir + "ncnn_input.npy"));
        testing::expect_close_to_reference(s.get("output"), read_npy(dir + "ncnn_output.npy"), 1e-4);
    }
}

} // namespace
} // namespace kestrel
