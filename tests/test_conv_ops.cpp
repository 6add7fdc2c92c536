// Convolution, ConvolutionDepthWise, Deconvolution, DeconvolutionDepthWise,
// Pooling and InnerProduct (fp32 paths; int8 is in test_int8_ops.cpp).
// Every expected value comes from a naive loop written here from the formula
// in ncnn-compat-spec §1.6/§1.7 (and ncnn's src/layer/*.cpp for the details the
// spec leaves out), evaluated in double precision; the op runs through a Net
// and a Session like any model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kestrel/kestrel.h"
#include "reference_conv.h"

using namespace kestrel;
using namespace kestrel::conv_test;

namespace {

// ---------------------------------------------------------------- helpers

// Element-wise |got - ref| <= atol + rtol*|ref|.
void expect_all_close(const Tensor& got, const std::vector<double>& ref, const Shape& ref_shape, double atol = 1e-5,
                      double rtol = 1e-5)
{
    ASSERT_EQ(got.shape(), ref_shape);
    ASSERT_EQ(got.dtype(), DType::F32);
    ASSERT_EQ(static_cast<size_t>(got.numel()), ref.size());
    int bad = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double g = got.data<float>()[i];
        if (!(std::fabs(g - ref[i]) <= atol + rtol * std::fabs(ref[i]))) {
            if (++bad <= 5) ADD_FAILURE() << "element " << i << ": got " << g << ", expected " << ref[i];
        }
    }
    EXPECT_EQ(bad, 0);
}

// Fused activation (spec §1.7), from the formulas.
double ref_act(int type, const std::vector<float>& p, double v)
{
    switch (type) {
    case 0: return v;
    case 1: return v > 0 ? v : 0;
    case 2: return v > 0 ? v : v * p[0];
    case 3: return v < p[0] ? p[0] : (v > p[1] ? p[1] : v);
    case 4: {
        const double c = std::min(std::max(v, -88.3762626647949), 88.3762626647949);
        return 1.0 / (1.0 + std::exp(-c));
    }
    case 5: return v * std::tanh(std::log(1.0 + std::exp(v)));
    case 6: {
        const double a = p[0], b = p[1];
        if (v < -b / a) return 0;
        if (v > (1 - b) / a) return v;
        return v * (a * v + b);
    }
    }
    ADD_FAILURE() << "bad activation " << type;
    return 0;
}

// A layer to probe for shape errors: its params and (zero) weights of the given sizes.
struct LayerSpec {
    std::string type;
    ParamDict pd;
    std::vector<Tensor> weights;
};

LayerSpec make_op(const std::string& type, const ParamDict& pd, const std::vector<int64_t>& weight_sizes = {})
{
    LayerSpec l{type, pd, {}};
    for (int64_t n : weight_sizes) l.weights.push_back(Tensor::zeros({n}, DType::F32));
    return l;
}

// Expects load_param to throw a kestrel::Error whose message contains `needle`.
void expect_param_error(const std::string& type, const ParamDict& pd, const std::string& needle)
{
    auto op = create_op(type);
    ASSERT_NE(op, nullptr) << type;
    try {
        op->load_param(pd);
        ADD_FAILURE() << type << " accepted " << pd.to_text() << " (expected an error mentioning '" << needle << "')";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
            << "message '" << e.what() << "' lacks '" << needle << "'";
    }
}

TensorDesc desc(const Shape& s, DType t = DType::F32)
{
    TensorDesc d;
    d.shape = s;
    d.dtype = t;
    return d;
}

// Runs the layer on zero inputs of the given shapes/dtypes and expects a
// kestrel::Error (from shape inference) mentioning `needle`.
void expect_infer_error(const LayerSpec& l, const std::vector<TensorDesc>& in, const std::string& needle)
{
    std::vector<Tensor> inputs;
    for (const TensorDesc& d : in) inputs.push_back(Tensor::zeros(d.shape, d.dtype));
    try {
        run_layer(l.type, l.pd, l.weights, inputs);
        ADD_FAILURE() << l.type << " accepted the inputs (expected an error mentioning '" << needle << "')";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
            << "message '" << e.what() << "' lacks '" << needle << "'";
    }
}

// ---------------------------------------------------------------- convolution reference

// What convolution and deconvolution cases share: the window, the channels
// and the params ncnn gives the same ids in both layers.
struct WindowCase {
    int outch = 4, inch = 3, kw = 3, kh = 3, dw = 1, dh = 1, sw = 1, sh = 1;
    int pl = 0, pr = 0, pt = 0, pb = 0; // all -233 / -234 for SAME (convolution)
    bool bias = false;
    int group = 1;
    int act = 0;
    int h = 7, w = 6;

    int64_t weight_count() const { return static_cast<int64_t>(outch) * (inch / group) * kh * kw; }
    PD window_params() const
    {
        PD p;
        p.i(0, outch).i(1, kw).i(11, kh).i(2, dw).i(12, dh).i(3, sw).i(13, sh);
        p.i(4, pl).i(15, pr).i(14, pt).i(16, pb).i(5, bias ? 1 : 0);
        return p;
    }
    ParamDict finish_params(PD p, bool depthwise) const
    {
        p.i(6, static_cast<int>(weight_count()));
        if (depthwise) p.i(7, group);
        if (act) p.i(9, act).fs(10, act_params_for(act));
        return p.pd;
    }
};

struct ConvCase : WindowCase {
    float pad_value = 0.f;

    std::string str() const
    {
        std::ostringstream os;
        os << "k=" << kw << "x" << kh << " d=" << dw << "x" << dh << " s=" << sw << "x" << sh << " pads=" << pl << ","
           << pr << "," << pt << "," << pb << " pv=" << pad_value << " bias=" << bias << " group=" << group
           << " act=" << act << " in=" << inch << "x" << h << "x" << w << " out=" << outch;
        return os.str();
    }
    ParamDict params(bool depthwise) const { return finish_params(window_params().f(18, pad_value), depthwise); }
};

// Naive grouped convolution in double; W is [outch][inch/group][kh][kw].
std::vector<double> ref_conv(const Tensor& x, const std::vector<float>& W, const std::vector<float>& bias,
                             const ConvCase& c, Shape& out_shape)
{
    const ConvWindow win{c.kh, c.kw, c.sh, c.sw, c.dh, c.dw, c.pt, c.pb, c.pl, c.pr};
    const std::vector<float> ap = act_params_for(c.act);
    const float* xs = x.data<float>();
    std::vector<double> out;
    out_shape = naive_conv(
        x.dim(0), x.dim(1), x.dim(2), c.outch, c.group, win,
        [&](int64_t oc) { return bias.empty() ? 0.0 : static_cast<double>(bias[oc]); },
        [&](double& s, int64_t, int64_t xi, int64_t wi) {
            const double v = xi < 0 ? c.pad_value : xs[xi];
            s += v * W[wi];
        },
        [&](int64_t, double s) { out.push_back(ref_act(c.act, ap, s)); });
    return out;
}

void check_conv_case(const ConvCase& c, bool depthwise, uint32_t seed, int threads = 1)
{
    SCOPED_TRACE(c.str());
    const Tensor x = random_tensor({c.inch, c.h, c.w}, seed, -2.f, 2.f);
    const std::vector<float> W = random_vector(c.weight_count(), seed + 1);
    const std::vector<float> b = c.bias ? random_vector(c.outch, seed + 2) : std::vector<float>{};
    std::vector<Tensor> weights{from_vector(W, {c.weight_count()})};
    if (c.bias) weights.push_back(from_vector(b, {c.outch}));
    const Tensor y = run_layer(depthwise ? "ConvolutionDepthWise" : "Convolution", c.params(depthwise), weights, {x},
                               threads);
    Shape shape;
    const std::vector<double> ref = ref_conv(x, W, b, c, shape);
    expect_all_close(y, ref, shape);
}

// ---------------------------------------------------------------- convolution tests

TEST(ConvOps, ConvolutionGridOfKernelStrideDilationPads)
{
    const int kernels[][2] = {{1, 1}, {3, 3}, {2, 3}};
    const int strides[][2] = {{1, 1}, {2, 2}, {1, 2}};
    const int dilations[][2] = {{1, 1}, {2, 1}};
    const int pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {1, 0, 2, 1}, {0, 2, 1, 0},
                           {-233, -233, -233, -233}, {-234, -234, -234, -234}};
    uint32_t seed = 100;
    int n = 0;
    for (const auto& k : kernels)
        for (const auto& s : strides)
            for (const auto& d : dilations)
                for (const auto& p : pads) {
                    ConvCase c;
                    c.kw = k[0], c.kh = k[1], c.sw = s[0], c.sh = s[1], c.dw = d[0], c.dh = d[1];
                    c.pl = p[0], c.pr = p[1], c.pt = p[2], c.pb = p[3];
                    c.bias = n % 2 == 0;
                    c.pad_value = n % 3 == 1 ? 0.75f : 0.f;
                    check_conv_case(c, false, seed += 7);
                    ++n;
                }
    EXPECT_EQ(n, 108);
}

TEST(ConvOps, ConvolutionEveryFusedActivation)
{
    for (int act = 0; act <= 6; ++act) {
        ConvCase c;
        c.act = act;
        c.bias = true;
        c.pl = c.pr = c.pt = c.pb = 1;
        check_conv_case(c, false, 300 + act);
    }
    // HardSwish as PyTorch converters write it (alpha = 1/6).
    ConvCase c;
    c.act = 6;
    const Tensor x = random_tensor({3, 5, 5}, 9, -4.f, 4.f);
    const std::vector<float> W = random_vector(c.weight_count(), 10, -1.f, 1.f);
    ParamDict pd = c.params(false);
    pd.set_floats(10, {1.f / 6.f, 0.5f});
    const Tensor y = run_layer("Convolution", pd, {from_vector(W, {c.weight_count()})}, {x});
    Shape shape;
    ConvCase ref_case = c;
    ref_case.act = 0;
    std::vector<double> ref = ref_conv(x, W, {}, ref_case, shape);
    for (double& v : ref) v = ref_act(6, {1.f / 6.f, 0.5f}, v);
    expect_all_close(y, ref, shape);
}

TEST(ConvOps, ConvolutionParamDefaultsFollowNcnn)
{
    // kernel_h <- kernel_w, dilation_h <- dilation_w, stride_h <- stride_w,
    // pad_right <- pad_left, pad_top <- pad_left, pad_bottom <- pad_top.
    const Tensor x = random_tensor({2, 9, 8}, 1);
    const std::vector<float> W = random_vector(3 * 2 * 3 * 3, 2);
    const Tensor y = run_layer("Convolution", PD().i(0, 3).i(1, 3).i(2, 2).i(3, 2).i(4, 1).i(14, 2).i(6, 54).pd,
                               {from_vector(W, {54})}, {x});
    ConvCase c;
    c.outch = 3, c.inch = 2, c.dw = c.dh = 2, c.sw = c.sh = 2, c.pl = 1, c.pr = 1, c.pt = 2, c.pb = 2;
    Shape shape;
    expect_all_close(y, ref_conv(x, W, {}, c, shape), shape);
}

TEST(ConvOps, ConvolutionResultDoesNotDependOnThreadCount)
{
    ConvCase c;
    c.outch = 7, c.inch = 5, c.h = 12, c.w = 11, c.bias = true, c.pl = c.pr = c.pt = c.pb = 1;
    const Tensor x = random_tensor({c.inch, c.h, c.w}, 3);
    const std::vector<float> W = random_vector(c.weight_count(), 4), b = random_vector(c.outch, 5);
    const std::vector<Tensor> weights{from_vector(W, {c.weight_count()}), from_vector(b, {c.outch})};
    const Tensor y1 = run_layer("Convolution", c.params(false), weights, {x}, 1);
    const Tensor y2 = run_layer("Convolution", c.params(false), weights, {x}, 2);
    ASSERT_EQ(y1.shape(), y2.shape());
    EXPECT_TRUE(std::equal(y1.data<float>(), y1.data<float>() + y1.numel(), y2.data<float>()));
}

TEST(ConvOps, ConvolutionDepthWiseGroups)
{
    struct G {
        int inch, outch, group;
    };
    uint32_t seed = 500;
    for (const G& g : {G{4, 4, 4}, G{4, 8, 4}, G{4, 6, 2}, G{6, 3, 3}, G{3, 5, 1}})
        for (int variant = 0; variant < 4; ++variant) {
            ConvCase c;
            c.inch = g.inch, c.outch = g.outch, c.group = g.group;
            c.bias = variant % 2 == 1;
            if (variant == 1) c.pl = c.pr = c.pt = c.pb = 1, c.pad_value = -0.5f;
            if (variant == 2) c.pl = c.pr = c.pt = c.pb = -233, c.sw = c.sh = 2;
            if (variant == 3) c.pl = c.pr = c.pt = c.pb = -234, c.sw = 2, c.dh = 2, c.act = 3;
            check_conv_case(c, true, seed += 11);
        }
}

TEST(ConvOps, ConvolutionDynamicWeight)
{
    // 19=1: inputs [x, W (outch, inch, kh, kw), bias (outch)]; kernel size comes from W.
    for (int with_bias = 0; with_bias <= 1; ++with_bias) {
        ConvCase c;
        c.outch = 5, c.inch = 3, c.kw = 3, c.kh = 2, c.sw = 2, c.pl = c.pr = c.pt = c.pb = 1, c.bias = with_bias;
        c.act = 1;
        const Tensor x = random_tensor({c.inch, c.h, c.w}, 40);
        const std::vector<float> W = random_vector(c.weight_count(), 41);
        const std::vector<float> b = with_bias ? random_vector(c.outch, 42) : std::vector<float>{};
        std::vector<Tensor> inputs{x, from_vector(W, {c.outch, c.inch, c.kh, c.kw})};
        if (with_bias) inputs.push_back(from_vector(b, {c.outch}));
        const ParamDict pd = PD().i(0, c.outch).i(3, 2).i(13, 1).i(4, 1).i(5, with_bias).i(9, 1).i(19, 1).pd;
        const Tensor y = run_layer("Convolution", pd, {}, inputs);
        Shape shape;
        SCOPED_TRACE(c.str());
        expect_all_close(y, ref_conv(x, W, b, c, shape), shape);
    }
    // Depthwise with dynamic weight: W is (outch, inch/group, kh, kw).
    ConvCase c;
    c.inch = 4, c.outch = 8, c.group = 4, c.kw = c.kh = 3, c.pl = c.pr = c.pt = c.pb = -233, c.bias = true;
    const Tensor x = random_tensor({c.inch, c.h, c.w}, 43);
    const std::vector<float> W = random_vector(c.weight_count(), 44), b = random_vector(c.outch, 45);
    const Tensor y = run_layer("ConvolutionDepthWise", PD().i(0, 8).i(7, 4).i(4, -233).i(5, 1).i(19, 1).pd, {},
                               {x, from_vector(W, {8, 1, 3, 3}), from_vector(b, {8})});
    Shape shape;
    expect_all_close(y, ref_conv(x, W, b, c, shape), shape);
}

TEST(ConvOps, Convolution1DInputWith1x1KernelIsInnerProduct)
{
    // Its weights are read from the GEMM's packed panels: outputs within one
    // panel, and across several.
    for (int outputs : {5, 30}) {
        const Tensor x = random_tensor({12}, 50);
        const std::vector<float> W = random_vector(outputs * 12, 51), b = random_vector(outputs, 52);
        const Tensor y = run_layer("Convolution", PD().i(0, outputs).i(1, 1).i(5, 1).i(6, outputs * 12).i(9, 1).pd,
                                   {from_vector(W, {outputs * 12}), from_vector(b, {outputs})}, {x});
        std::vector<double> ref(static_cast<size_t>(outputs));
        for (int o = 0; o < outputs; ++o) {
            double s = b[o];
            for (int i = 0; i < 12; ++i) s += static_cast<double>(W[o * 12 + i]) * x.data<float>()[i];
            ref[static_cast<size_t>(o)] = std::max(s, 0.0);
        }
        expect_all_close(y, ref, {outputs});
    }
}

TEST(ConvOps, ConvolutionRejectsInvalidParams)
{
    expect_param_error("Convolution", PD().i(0, 4).i(6, 36).pd, "kernel_w");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(11, 0).i(6, 36).pd, "kernel_h");
    expect_param_error("Convolution", PD().i(0, 0).i(1, 3).i(6, 36).pd, "num_output");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(3, 0).i(6, 36).pd, "stride_w");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(13, -1).i(6, 36).pd, "stride_h");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(2, 0).i(6, 36).pd, "dilation_w");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(6, 35).pd, "weight_data_size");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).pd, "weight_data_size");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(6, 36).i(4, -1).pd, "pads");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(6, 36).i(4, -233).i(14, 1).pd, "pads");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(6, 36).i(9, 8).pd, "activation_type");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(6, 36).i(9, 2).pd, "activation");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(6, 36).i(19, 2).pd, "dynamic_weight");
    expect_param_error("Convolution", PD().i(0, 4).i(1, 3).i(6, 36).i(8, -1).pd, "int8_scale_term");
    expect_param_error("Convolution", PD().i(0, 4).i(19, 1).i(8, 2).pd, "dynamic");
    expect_param_error("ConvolutionDepthWise", PD().i(0, 6).i(1, 3).i(7, 4).i(6, 54).pd, "group");
    expect_param_error("ConvolutionDepthWise", PD().i(0, 4).i(1, 3).i(7, 0).i(6, 36).pd, "group");
    expect_param_error("ConvolutionDepthWise", PD().i(0, 4).i(1, 3).i(7, 4).i(6, 36).i(8, 3).pd, "int8_scale_term");
}

TEST(ConvOps, ConvolutionRejectsBadInputs)
{
    auto conv = make_op("Convolution", PD().i(0, 4).i(1, 3).i(6, 4 * 3 * 9).pd, {108}); // 3 input channels
    expect_infer_error(conv, {desc({3, 8})}, "(c,h,w)");
    expect_infer_error(conv, {desc({1, 3, 8, 8})}, "(c,h,w)");
    expect_infer_error(conv, {desc({2, 8, 8})}, "input channels");
    expect_infer_error(conv, {desc({3, 2, 8})}, "does not fit");
    expect_infer_error(conv, {desc({3, 8, 8}, DType::I8)}, "int8");
    expect_infer_error(conv, {desc({3, 8, 8}), desc({3, 8, 8})}, "input");
    auto dw = make_op("ConvolutionDepthWise", PD().i(0, 4).i(1, 3).i(7, 2).i(6, 4 * 2 * 9).pd, {72}); // 4 input channels
    expect_infer_error(dw, {desc({2, 8, 8})}, "input channels");
    auto dyn = make_op("Convolution", PD().i(0, 4).i(5, 1).i(19, 1).pd);
    expect_infer_error(dyn, {desc({3, 8, 8})}, "input");
    expect_infer_error(dyn, {desc({3, 8, 8}), desc({4, 3, 3, 3}), desc({5})}, "bias");
    expect_infer_error(dyn, {desc({3, 8, 8}), desc({4, 2, 3, 3}), desc({4})}, "input channels");
    expect_infer_error(dyn, {desc({3, 8, 8}), desc({4, 27}), desc({4})}, "weight input");
}

// ---------------------------------------------------------------- deconvolution

struct DeconvCase : WindowCase {
    int opr = 0, opb = 0; // output_pad right/bottom
    int out_w = 0, out_h = 0;

    DeconvCase()
    {
        outch = 3;
        inch = 2;
        h = 4;
        w = 5;
    }
    std::string str() const
    {
        std::ostringstream os;
        os << "k=" << kw << "x" << kh << " d=" << dw << "x" << dh << " s=" << sw << "x" << sh << " pads=" << pl << ","
           << pr << "," << pt << "," << pb << " output_pad=" << opr << "," << opb << " output=" << out_w << "x"
           << out_h << " bias=" << bias << " group=" << group << " act=" << act;
        return os.str();
    }
    ParamDict params(bool depthwise) const
    {
        PD p = window_params();
        p.i(18, opr).i(19, opb);
        if (out_w) p.i(20, out_w).i(21, out_h);
        return finish_params(p, depthwise);
    }
};

// Naive transposed convolution from the definition: out[oy][ox] collects
// x[iy][ix]*W[oc][ic][ky][kx] for oy = iy*sh + ky*dh, ox = ix*sw + kx*dw, over a
// full canvas of (in-1)*stride + extent + output_pad, which is then cut.
// W is [outch][inch/group][kh][kw].
std::vector<double> ref_deconv(const Tensor& x, const std::vector<float>& W, const std::vector<float>& bias,
                               const DeconvCase& c, Shape& out_shape)
{
    const int64_t C = x.dim(0), H = x.dim(1), Wd = x.dim(2);
    const int64_t FH = (H - 1) * c.sh + c.dh * (c.kh - 1) + 1 + c.opb;
    const int64_t FW = (Wd - 1) * c.sw + c.dw * (c.kw - 1) + 1 + c.opr;
    const int64_t inch_g = C / c.group, outch_g = c.outch / c.group;
    std::vector<double> full(static_cast<size_t>(c.outch * FH * FW), 0.0);
    for (int64_t oc = 0; oc < c.outch; ++oc) {
        for (int64_t i = 0; i < FH * FW; ++i) full[oc * FH * FW + i] = bias.empty() ? 0.0 : bias[oc];
        for (int64_t i = 0; i < inch_g; ++i) {
            const int64_t ic = oc / outch_g * inch_g + i;
            for (int64_t iy = 0; iy < H; ++iy)
                for (int64_t ix = 0; ix < Wd; ++ix)
                    for (int64_t ky = 0; ky < c.kh; ++ky)
                        for (int64_t kx = 0; kx < c.kw; ++kx)
                            full[(oc * FH + iy * c.sh + ky * c.dh) * FW + ix * c.sw + kx * c.dw] +=
                                static_cast<double>(x.data<float>()[(ic * H + iy) * Wd + ix]) *
                                W[((oc * inch_g + i) * c.kh + ky) * c.kw + kx];
        }
    }
    int64_t top = 0, left = 0, OH = FH, OW = FW;
    if (c.pl > 0 || c.pr > 0 || c.pt > 0 || c.pb > 0) {
        top = c.pt, left = c.pl, OH = FH - c.pt - c.pb, OW = FW - c.pl - c.pr;
    } else if (c.out_w > 0) {
        const int64_t hc = FH - c.out_h, wc = FW - c.out_w;
        top = c.pl == -233 ? hc / 2 : hc - hc / 2;
        left = c.pl == -233 ? wc / 2 : wc - wc / 2;
        OH = c.out_h, OW = c.out_w;
    }
    out_shape = {c.outch, OH, OW};
    std::vector<double> out;
    const std::vector<float> ap = act_params_for(c.act);
    for (int64_t oc = 0; oc < c.outch; ++oc)
        for (int64_t y = 0; y < OH; ++y)
            for (int64_t xx = 0; xx < OW; ++xx)
                out.push_back(ref_act(c.act, ap, full[(oc * FH + y + top) * FW + xx + left]));
    return out;
}

void check_deconv_case(const DeconvCase& c, bool depthwise, uint32_t seed)
{
    SCOPED_TRACE(c.str());
    const Tensor x = random_tensor({c.inch, c.h, c.w}, seed, -2.f, 2.f);
    const std::vector<float> W = random_vector(c.weight_count(), seed + 1);
    const std::vector<float> b = c.bias ? random_vector(c.outch, seed + 2) : std::vector<float>{};
    std::vector<Tensor> weights{from_vector(W, {c.weight_count()})};
    if (c.bias) weights.push_back(from_vector(b, {c.outch}));
    const Tensor y = run_layer(depthwise ? "DeconvolutionDepthWise" : "Deconvolution", c.params(depthwise), weights, {x});
    Shape shape;
    const std::vector<double> ref = ref_deconv(x, W, b, c, shape);
    expect_all_close(y, ref, shape);
}

TEST(DeconvOps, DeconvolutionGrid)
{
    const int kernels[][2] = {{1, 1}, {3, 3}, {2, 3}, {4, 4}};
    const int strides[][2] = {{1, 1}, {2, 2}, {3, 1}};
    const int dilations[][2] = {{1, 1}, {1, 2}};
    const int pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {1, 0, 0, 2}};
    const int opads[][2] = {{0, 0}, {1, 1}, {1, 0}};
    uint32_t seed = 700;
    int n = 0;
    for (const auto& k : kernels)
        for (const auto& s : strides)
            for (const auto& d : dilations)
                for (const auto& p : pads)
                    for (const auto& op : opads) {
                        DeconvCase c;
                        c.kw = k[0], c.kh = k[1], c.sw = s[0], c.sh = s[1], c.dw = d[0], c.dh = d[1];
                        c.pl = p[0], c.pr = p[1], c.pt = p[2], c.pb = p[3], c.opr = op[0], c.opb = op[1];
                        c.bias = n % 2 == 1;
                        c.act = n % 7;
                        check_deconv_case(c, false, seed += 5);
                        ++n;
                    }
    EXPECT_EQ(n, 216);
}

TEST(DeconvOps, DeconvolutionOutputSizeWithSamePads)
{
    // output_w/h (20/21) with pads -233 (cut odd pixel at the end) or -234 (at the start).
    uint32_t seed = 900;
    for (int mode : {-233, -234})
        for (int s : {1, 2, 3})
            for (int extra : {0, 1}) {
                DeconvCase c;
                c.sw = c.sh = s, c.kw = c.kh = 3, c.opr = c.opb = extra;
                c.pl = c.pr = c.pt = c.pb = mode;
                c.out_w = c.w * s, c.out_h = c.h * s; // e.g. ONNX SAME: in*stride
                c.bias = true;
                check_deconv_case(c, false, seed += 3);
                // Pads -233 without output_w/h: nothing is cut.
                DeconvCase uncut = c;
                uncut.out_w = uncut.out_h = 0;
                check_deconv_case(uncut, false, seed += 3);
            }
}

TEST(DeconvOps, DeconvolutionDepthWiseGroups)
{
    struct G {
        int inch, outch, group;
    };
    uint32_t seed = 1000;
    for (const G& g : {G{4, 4, 4}, G{4, 8, 4}, G{4, 6, 2}, G{2, 3, 1}})
        for (int variant = 0; variant < 3; ++variant) {
            DeconvCase c;
            c.inch = g.inch, c.outch = g.outch, c.group = g.group, c.bias = variant != 0;
            if (variant == 1) c.sw = c.sh = 2, c.pl = c.pr = c.pt = c.pb = 1, c.opr = c.opb = 1, c.act = 2;
            if (variant == 2) c.sw = 2, c.pl = c.pr = c.pt = c.pb = -234, c.out_w = 10, c.out_h = 4;
            check_deconv_case(c, true, seed += 7);
        }
}

TEST(DeconvOps, DeconvolutionDynamicWeight)
{
    // 28=1: W comes as an input in ONNX order (inch, outch/group, kh, kw).
    for (int group : {1, 2}) {
        DeconvCase c;
        c.inch = 4, c.outch = 6, c.group = group, c.kw = 3, c.kh = 2, c.sw = 2, c.sh = 2, c.pl = c.pr = c.pt = c.pb = 1;
        c.bias = true;
        const int64_t inch_g = c.inch / group, outch_g = c.outch / group;
        const Tensor x = random_tensor({c.inch, c.h, c.w}, 77 + group);
        const std::vector<float> Wd = random_vector(c.weight_count(), 78); // (inch, outch/g, kh, kw)
        const std::vector<float> b = random_vector(c.outch, 79);
        // The reference wants [outch][inch/g][kh][kw].
        std::vector<float> W(Wd.size());
        for (int64_t g = 0; g < group; ++g)
            for (int64_t o = 0; o < outch_g; ++o)
                for (int64_t i = 0; i < inch_g; ++i)
                    for (int64_t k = 0; k < c.kh * c.kw; ++k)
                        W[(((g * outch_g + o) * inch_g) + i) * c.kh * c.kw + k] =
                            Wd[(((g * inch_g + i) * outch_g) + o) * c.kh * c.kw + k];
        PD p;
        p.i(0, c.outch).i(3, 2).i(4, 1).i(5, 1).i(28, 1);
        if (group > 1) p.i(7, group);
        const Tensor y = run_layer(group > 1 ? "DeconvolutionDepthWise" : "Deconvolution", p.pd, {},
                                   {x, from_vector(Wd, {c.inch, outch_g, c.kh, c.kw}), from_vector(b, {c.outch})});
        Shape shape;
        SCOPED_TRACE(c.str());
        expect_all_close(y, ref_deconv(x, W, b, c, shape), shape);
    }
}

TEST(DeconvOps, DeconvolutionRejectsInvalidParamsAndInputs)
{
    expect_param_error("Deconvolution", PD().i(0, 4).i(6, 36).pd, "kernel_w");
    expect_param_error("Deconvolution", PD().i(0, 4).i(1, 3).i(3, 0).i(6, 36).pd, "stride_w");
    expect_param_error("Deconvolution", PD().i(0, 4).i(1, 3).i(6, 37).pd, "weight_data_size");
    expect_param_error("Deconvolution", PD().i(0, 4).i(1, 3).i(6, 36).i(18, -1).pd, "output_pad");
    expect_param_error("Deconvolution", PD().i(0, 4).i(1, 3).i(6, 36).i(20, 8).pd, "-233");
    expect_param_error("Deconvolution", PD().i(0, 4).i(1, 3).i(6, 36).i(4, -2).pd, "pads");
    expect_param_error("Deconvolution", PD().i(0, 4).i(1, 3).i(6, 36).i(28, 3).pd, "dynamic_weight");
    expect_param_error("DeconvolutionDepthWise", PD().i(0, 6).i(1, 3).i(7, 4).i(6, 54).pd, "group");
    auto op = make_op("Deconvolution", PD().i(0, 4).i(1, 3).i(6, 72).pd, {72}); // 2 input channels
    expect_infer_error(op, {desc({3, 5, 5})}, "input channels");
    expect_infer_error(op, {desc({5, 5})}, "(c,h,w)");
    expect_infer_error(op, {desc({2, 5, 5}, DType::I8)}, "float32");
    auto cut = make_op("Deconvolution", PD().i(0, 4).i(1, 3).i(6, 72).i(4, -233).i(20, 100).pd, {72});
    expect_infer_error(cut, {desc({2, 5, 5})}, "exceed");
    auto crop = make_op("Deconvolution", PD().i(0, 4).i(1, 3).i(6, 72).i(4, 2).pd, {72});
    expect_infer_error(crop, {desc({2, 1, 1})}, "empty");
}

// ---------------------------------------------------------------- pooling

struct PoolCase {
    int type = 0, kw = 3, kh = 3, sw = 1, sh = 1, pl = 0, pr = 0, pt = 0, pb = 0, mode = 0, include_pad = 0;
    int c = 2, h = 7, w = 8;
    std::string str() const
    {
        std::ostringstream os;
        os << (type ? "avg" : "max") << " k=" << kw << "x" << kh << " s=" << sw << "x" << sh << " pads=" << pl << ","
           << pr << "," << pt << "," << pb << " mode=" << mode << " include_pad=" << include_pad << " in=" << h << "x"
           << w;
        return os.str();
    }
    ParamDict params() const
    {
        return PD().i(0, type).i(1, kw).i(11, kh).i(2, sw).i(12, sh).i(3, pl).i(14, pr).i(13, pt).i(15, pb).i(5, mode)
            .i(6, include_pad)
            .pd;
    }
};

// ncnn's pooling written out: build the bordered plane explicitly (pads,
// ceil-mode tail in mode 0, SAME pads in modes 2/3), then pool every window.
// Average without include_pad counts the positions of the bordered plane in
// [pad_top, H_b - pad_bottom - tail) x [pad_left, W_b - pad_right - tail) with
// the *param* pads (ncnn pooling.cpp); average with include_pad divides by kh*kw.
template <class T>
std::vector<double> ref_pool(const std::vector<T>& x, const PoolCase& p, T pad_max, Shape& out_shape)
{
    int64_t top = p.pt, bottom = p.pb, left = p.pl, right = p.pr, htail = 0, wtail = 0;
    if (p.mode == 0) {
        const int64_t rw = (p.w + p.pl + p.pr - p.kw) % p.sw, rh = (p.h + p.pt + p.pb - p.kh) % p.sh;
        wtail = rw ? p.sw - rw : 0;
        htail = rh ? p.sh - rh : 0;
    } else if (p.mode >= 2) {
        same_pads(p.mode == 2 ? -233 : -234, p.w, p.kw, p.sw, left, right);
        same_pads(p.mode == 2 ? -233 : -234, p.h, p.kh, p.sh, top, bottom);
    }
    const int64_t HB = p.h + top + bottom + htail, WB = p.w + left + right + wtail;
    const int64_t OH = (HB - p.kh) / p.sh + 1, OW = (WB - p.kw) / p.sw + 1;
    out_shape = {p.c, OH, OW};
    std::vector<double> out;
    for (int64_t ch = 0; ch < p.c; ++ch) {
        std::vector<double> b(static_cast<size_t>(HB * WB), p.type == 0 ? static_cast<double>(pad_max) : 0.0);
        for (int64_t y = 0; y < p.h; ++y)
            for (int64_t xx = 0; xx < p.w; ++xx) b[(y + top) * WB + xx + left] = x[(ch * p.h + y) * p.w + xx];
        for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OW; ++ox) {
                double m = -INFINITY, sum = 0;
                int64_t area = 0;
                for (int64_t ky = 0; ky < p.kh; ++ky)
                    for (int64_t kx = 0; kx < p.kw; ++kx) {
                        const int64_t sy = oy * p.sh + ky, sx = ox * p.sw + kx;
                        const double v = b[sy * WB + sx];
                        m = std::max(m, v);
                        const bool counted = sy >= p.pt && sy < HB - p.pb - htail && sx >= p.pl &&
                                             sx < WB - p.pr - wtail;
                        if (p.include_pad || counted) sum += v, ++area;
                    }
                if (p.type == 0)
                    out.push_back(m);
                else
                    out.push_back(p.include_pad ? sum / (p.kh * p.kw) : (area ? sum / area : 0.0));
            }
    }
    return out;
}

TEST(PoolOps, PoolingEveryPadModeMaxAvgIncludePad)
{
    const int kernels[][2] = {{2, 2}, {3, 3}, {3, 2}};
    const int strides[][2] = {{1, 1}, {2, 2}, {3, 2}};
    const int pads[][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {1, 0, 2, 1}};
    const int sizes[][2] = {{7, 8}, {6, 5}};
    uint32_t seed = 1200;
    int n = 0;
    for (int mode = 0; mode <= 3; ++mode)
        for (int type = 0; type <= 1; ++type)
            for (int inc = 0; inc <= 1; ++inc)
                for (const auto& k : kernels)
                    for (const auto& s : strides)
                        for (const auto& pd : pads)
                            for (const auto& sz : sizes) {
                                PoolCase p;
                                p.mode = mode, p.type = type, p.include_pad = inc, p.kw = k[0], p.kh = k[1];
                                p.sw = s[0], p.sh = s[1], p.pl = pd[0], p.pr = pd[1], p.pt = pd[2], p.pb = pd[3];
                                p.h = sz[0], p.w = sz[1];
                                if (type == 0 && inc == 1) continue; // include_pad only matters for avg
                                SCOPED_TRACE(p.str());
                                const Tensor x = random_tensor({p.c, p.h, p.w}, seed += 3, -3.f, 3.f);
                                const std::vector<float> xv(x.data<float>(), x.data<float>() + x.numel());
                                Shape shape;
                                const std::vector<double> ref = ref_pool<float>(xv, p, -FLT_MAX, shape);
                                expect_all_close(run_layer("Pooling", p.params(), {}, {x}), ref, shape);
                                ++n;
                            }
    EXPECT_EQ(n, 4 * 3 * 54);
}

TEST(PoolOps, PoolingHandCheckedNcnnRules)
{
    // Ceil-mode tail: w=4, k=3, s=2 -> tail 1, windows [1,2,3] and [3,4,tail].
    const Tensor x = from_vector({1, 2, 3, 4}, {1, 1, 4});
    const ParamDict base = PD().i(1, 3).i(11, 1).i(2, 2).pd;
    auto run = [&](int type, int inc, int mode, const Tensor& in) {
        ParamDict pd = base;
        pd.set_int(0, type);
        pd.set_int(6, inc);
        pd.set_int(5, mode);
        return run_layer("Pooling", pd, {}, {in});
    };
    Tensor y = run(0, 0, 0, x);
    ASSERT_EQ(y.shape(), Shape({1, 1, 2}));
    EXPECT_FLOAT_EQ(y.data<float>()[1], 4.f);
    y = run(1, 1, 0, x); // the tail counts in the divisor with include_pad
    EXPECT_FLOAT_EQ(y.data<float>()[0], 2.f);
    EXPECT_FLOAT_EQ(y.data<float>()[1], 7.f / 3.f);
    y = run(1, 0, 0, x); // ... and not without
    EXPECT_FLOAT_EQ(y.data<float>()[1], 3.5f);
    y = run(1, 0, 1, x); // valid mode: no tail, one window
    ASSERT_EQ(y.shape(), Shape({1, 1, 1}));

    // SAME (pad_mode 2) average without include_pad: ncnn excludes only the
    // param pads (0 here), so the SAME padding zeros are counted: a corner of a
    // 3x3 all-ones input gives 4/9, not 1.
    Tensor ones = from_vector(std::vector<float>(9, 1.f), {1, 3, 3});
    y = run_layer("Pooling", PD().i(0, 1).i(1, 3).i(5, 2).pd, {}, {ones});
    ASSERT_EQ(y.shape(), Shape({1, 3, 3}));
    EXPECT_FLOAT_EQ(y.data<float>()[0], 4.f / 9.f);
    EXPECT_FLOAT_EQ(y.data<float>()[4], 1.f);
    // The same padding given explicitly (pad_mode 1) is excluded: 4/4.
    y = run_layer("Pooling", PD().i(0, 1).i(1, 3).i(3, 1).i(5, 1).pd, {}, {ones});
    EXPECT_FLOAT_EQ(y.data<float>()[0], 1.f);
    // Max pooling counts -FLT_MAX padding: a window entirely in the padding gives -FLT_MAX.
    y = run_layer("Pooling", PD().i(0, 0).i(1, 2).i(2, 2).i(3, 2).i(5, 1).pd, {}, {ones});
    EXPECT_EQ(y.data<float>()[0], -FLT_MAX);
}

TEST(PoolOps, PoolingGlobalAndAdaptive)
{
    const Tensor x = random_tensor({3, 5, 7}, 1300, -2.f, 2.f);
    const float* xp = x.data<float>();
    for (int type = 0; type <= 1; ++type) {
        const Tensor y = run_layer("Pooling", PD().i(0, type).i(4, 1).pd, {}, {x});
        std::vector<double> ref;
        for (int c = 0; c < 3; ++c) {
            double m = -INFINITY, s = 0;
            for (int i = 0; i < 35; ++i) m = std::max(m, static_cast<double>(xp[c * 35 + i])), s += xp[c * 35 + i];
            ref.push_back(type == 0 ? m : s / 35);
        }
        expect_all_close(y, ref, {3});
    }
    const int outs[][2] = {{1, 1}, {2, 3}, {5, 7}, {4, 6}, {8, 9}, {-233, 2}, {3, -233}};
    for (int type = 0; type <= 1; ++type)
        for (const auto& o : outs) {
            SCOPED_TRACE(std::to_string(o[0]) + "x" + std::to_string(o[1]));
            const Tensor y = run_layer("Pooling", PD().i(0, type).i(7, 1).i(8, o[0]).i(18, o[1]).pd, {}, {x});
            const int64_t OW = o[0] == -233 ? 7 : o[0], OH = o[1] == -233 ? 5 : o[1];
            std::vector<double> ref;
            for (int c = 0; c < 3; ++c)
                for (int64_t i = 0; i < OH; ++i)
                    for (int64_t j = 0; j < OW; ++j) {
                        // window [floor(i*H/OH), ceil((i+1)*H/OH))
                        const int64_t y0 = static_cast<int64_t>(std::floor(i * 5.0 / OH));
                        const int64_t y1 = static_cast<int64_t>(std::ceil((i + 1) * 5.0 / OH));
                        const int64_t x0 = static_cast<int64_t>(std::floor(j * 7.0 / OW));
                        const int64_t x1 = static_cast<int64_t>(std::ceil((j + 1) * 7.0 / OW));
                        double m = -INFINITY, s = 0;
                        for (int64_t yy = y0; yy < y1; ++yy)
                            for (int64_t xx = x0; xx < x1; ++xx)
                                m = std::max(m, static_cast<double>(xp[(c * 5 + yy) * 7 + xx])),
                                s += xp[(c * 5 + yy) * 7 + xx];
                        ref.push_back(type == 0 ? m : s / ((y1 - y0) * (x1 - x0)));
                    }
            expect_all_close(y, ref, {3, OH, OW});
        }
}

TEST(PoolOps, PoolingInt8MaxPadsWithMinus128)
{
    std::mt19937 gen(1400);
    std::uniform_int_distribution<int> dist(-127, 127);
    uint32_t n = 0;
    for (int mode = 0; mode <= 3; ++mode)
        for (int pad : {0, 1, 2}) {
            PoolCase p;
            p.mode = mode, p.kw = p.kh = 3, p.sw = p.sh = 2, p.pl = p.pr = p.pt = p.pb = pad, p.h = 6, p.w = 7;
            SCOPED_TRACE(p.str());
            Tensor x({p.c, p.h, p.w}, DType::I8);
            std::vector<int8_t> xv(static_cast<size_t>(x.numel()));
            // Odd cases are mostly near -127 so that the -128 padding is the maximum's only rival.
            for (auto& v : xv) v = static_cast<int8_t>(n % 2 ? std::max(-128, dist(gen) / 16 - 120) : dist(gen));
            ++n;
            std::copy(xv.begin(), xv.end(), x.data<int8_t>());
            const Tensor y = run_layer("Pooling", p.params(), {}, {x});
            ASSERT_EQ(y.dtype(), DType::I8);
            Shape shape;
            const std::vector<double> ref = ref_pool<int8_t>(xv, p, int8_t(-128), shape);
            ASSERT_EQ(y.shape(), shape);
            for (size_t i = 0; i < ref.size(); ++i) EXPECT_EQ(y.data<int8_t>()[i], static_cast<int8_t>(ref[i])) << i;
        }
    // A window entirely in the padding gives -128.
    Tensor x({1, 1, 1}, DType::I8);
    x.data<int8_t>()[0] = -100;
    const Tensor y = run_layer("Pooling", PD().i(1, 2).i(2, 2).i(3, 2).i(5, 1).pd, {}, {x});
    ASSERT_EQ(y.shape(), Shape({1, 2, 2}));
    EXPECT_EQ(y.data<int8_t>()[0], -128);
    EXPECT_EQ(y.data<int8_t>()[3], -100);
    // Global max over int8.
    Tensor g({2, 2, 2}, DType::I8);
    const int8_t gv[] = {-5, -3, -9, -127, 1, 2, 127, 0};
    std::copy(gv, gv + 8, g.data<int8_t>());
    const Tensor gy = run_layer("Pooling", PD().i(4, 1).pd, {}, {g});
    ASSERT_EQ(gy.shape(), Shape({2}));
    EXPECT_EQ(gy.data<int8_t>()[0], -3);
    EXPECT_EQ(gy.data<int8_t>()[1], 127);
}

TEST(PoolOps, PoolingRejectsInvalidParamsAndInputs)
{
    expect_param_error("Pooling", PD().i(0, 2).i(1, 2).pd, "pooling_type");
    expect_param_error("Pooling", PD().i(1, 0).pd, "kernel_w");
    expect_param_error("Pooling", PD().i(1, 2).i(11, -1).pd, "kernel_h");
    expect_param_error("Pooling", PD().i(1, 2).i(2, 0).pd, "stride_w");
    expect_param_error("Pooling", PD().i(1, 2).i(3, -1).pd, "pads");
    expect_param_error("Pooling", PD().i(1, 2).i(5, 4).pd, "pad_mode");
    expect_param_error("Pooling", PD().i(7, 1).i(8, 0).pd, "out_w");
    expect_param_error("Pooling", PD().i(7, 1).i(8, 2).i(18, -5).pd, "out_h");
    auto op = make_op("Pooling", PD().i(1, 3).i(5, 1).pd);
    expect_infer_error(op, {desc({8, 8})}, "(c,h,w)");
    expect_infer_error(op, {desc({1, 2, 8})}, "does not fit");
    auto avg = make_op("Pooling", PD().i(0, 1).i(1, 3).pd);
    expect_infer_error(avg, {desc({1, 8, 8}, DType::I8)}, "max pooling");
    expect_infer_error(avg, {desc({1, 8, 8}, DType::I32)}, "float32 or int8");
}

// ---------------------------------------------------------------- inner product

std::vector<double> ref_fc(const float* x, int64_t rows, int64_t n_in, const std::vector<float>& W,
                           const std::vector<float>& b, int64_t n_out, int act)
{
    std::vector<double> out;
    const std::vector<float> ap = act_params_for(act);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t o = 0; o < n_out; ++o) {
            double s = b.empty() ? 0.0 : b[o];
            for (int64_t i = 0; i < n_in; ++i) s += static_cast<double>(x[r * n_in + i]) * W[o * n_in + i];
            out.push_back(ref_act(act, ap, s));
        }
    return out;
}

TEST(InnerProductOps, FlattenedRowWiseBiasAndActivations)
{
    const int64_t n_in = 24, n_out = 5;
    const std::vector<float> W = random_vector(n_in * n_out, 1500), b = random_vector(n_out, 1501);
    for (int act = 0; act <= 6; ++act)
        for (int bias = 0; bias <= 1; ++bias) {
            SCOPED_TRACE("act=" + std::to_string(act) + " bias=" + std::to_string(bias));
            PD p;
            p.i(0, n_out).i(1, bias).i(2, n_in * n_out);
            if (act) p.i(9, act).fs(10, act_params_for(act));
            std::vector<Tensor> weights{from_vector(W, {n_in * n_out})};
            if (bias) weights.push_back(from_vector(b, {n_out}));
            const std::vector<float> bb = bias ? b : std::vector<float>{};
            // 1-D, 3-D (flattened) and 4-D (flattened) inputs.
            for (const Shape& s : {Shape{24}, Shape{2, 3, 4}, Shape{2, 3, 2, 2}}) {
                const Tensor x = random_tensor(s, 1502 + act, -2.f, 2.f);
                expect_all_close(run_layer("InnerProduct", p.pd, weights, {x}),
                                 ref_fc(x.data<float>(), 1, n_in, W, bb, n_out, act), {n_out});
            }
            // 2-D (rows, num_input): row-wise, output (rows, num_output).
            const Tensor x2 = random_tensor({3, n_in}, 1510 + act, -2.f, 2.f);
            expect_all_close(run_layer("InnerProduct", p.pd, weights, {x2}),
                             ref_fc(x2.data<float>(), 3, n_in, W, bb, n_out, act), {3, n_out});
            // 2-D input whose width is not num_input is flattened.
            const Tensor x3 = random_tensor({4, 6}, 1520 + act, -2.f, 2.f);
            expect_all_close(run_layer("InnerProduct", p.pd, weights, {x3}),
                             ref_fc(x3.data<float>(), 1, n_in, W, bb, n_out, act), {n_out});
        }
}

// Rows in blocks of 8 and 16-lane dot products: row counts and widths that
// leave partial blocks and tails, against the double reference, and the same
// bits at every thread count.
// Few rows take the dot products (blocks of 8 rows, 16-lane tails); from 16
// rows on, the GEMM (outputs past one register tile, with and without bias,
// with an activation).
TEST(InnerProductOps, RowBlocksDotTailsAndGemmAnyThreadCount)
{
    struct Case {
        int64_t rows, n_in, n_out;
        bool bias;
        int act;
    };
    for (const Case& c : {Case{19, 37, 11, true, 0}, Case{8, 16, 11, true, 0}, Case{1, 5, 11, true, 0},
                          Case{9, 100, 11, true, 0}, Case{40, 70, 45, true, 1}, Case{33, 64, 70, false, 3}}) {
        SCOPED_TRACE(std::to_string(c.rows) + " rows x " + std::to_string(c.n_in) + " -> " + std::to_string(c.n_out));
        const std::vector<float> W = random_vector(c.n_in * c.n_out, 1530);
        const std::vector<float> b = c.bias ? random_vector(c.n_out, 1531) : std::vector<float>{};
        PD p;
        p.i(0, static_cast<int>(c.n_out)).i(1, c.bias ? 1 : 0).i(2, static_cast<int>(c.n_in * c.n_out));
        if (c.act) p.i(9, c.act).fs(10, act_params_for(c.act));
        std::vector<Tensor> weights{from_vector(W, {c.n_in * c.n_out})};
        if (c.bias) weights.push_back(from_vector(b, {c.n_out}));
        const Tensor x = random_tensor({c.rows, c.n_in}, 1532, -2.f, 2.f);
        const Tensor one = run_layer("InnerProduct", p.pd, weights, {x});
        expect_all_close(one, ref_fc(x.data<float>(), c.rows, c.n_in, W, b, c.n_out, c.act), {c.rows, c.n_out});
        for (int threads : {2, 3}) {
            const Tensor many = run_layer("InnerProduct", p.pd, weights, {x}, threads);
            EXPECT_EQ(std::memcmp(one.raw(), many.raw(), one.nbytes()), 0) << threads << " threads";
        }
    }
}

TEST(InnerProductOps, RejectsInvalidParamsAndInputs)
{
    expect_param_error("InnerProduct", PD().i(2, 12).pd, "num_output");
    expect_param_error("InnerProduct", PD().i(0, 5).pd, "weight_data_size");
    expect_param_error("InnerProduct", PD().i(0, 5).i(2, 12).pd, "weight_data_size");
    expect_param_error("InnerProduct", PD().i(0, 4).i(2, 12).i(9, 9).pd, "activation_type");
    expect_param_error("InnerProduct", PD().i(0, 4).i(2, 12).i(8, -1).pd, "int8_scale_term");
    auto op = make_op("InnerProduct", PD().i(0, 4).i(2, 12).pd, {12});
    expect_infer_error(op, {desc({13})}, "expects 3 input values");
    expect_infer_error(op, {desc({3}, DType::I8)}, "int8");
    expect_infer_error(op, {desc({3}), desc({3})}, "input");
}

} // namespace
