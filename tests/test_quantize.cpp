// Post-training quantization (kestrel/quantize.h, `kestrel quantize`):
// thresholds against distributions with known answers, the weight rounding
// against a naive per-channel quantizer, the written files walked by the
// spec's rules for ncnn's int8 layers, and whole networks (resnet18 and
// mobilenet_v2, ncnn and ONNX forms) calibrated on 64 generated pictures
// and compared with the float model on 16 others.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "graph/graph.h"
#include "frontend/ncnn/export_form.h"
#include "kestrel/kestrel.h"
#include "kestrel/quantize.h"
#include "quantize/thresholds.h"
#include "ncnn_rules.h"
#include "test_helpers.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#endif

using namespace kestrel;

namespace {

// --- thresholds -------------------------------------------------------------

AbsHistogram histogram_of(const std::vector<float>& values)
{
    float absmax = 0;
    for (float v : values) absmax = std::max(absmax, std::fabs(v));
    AbsHistogram h(absmax);
    h.add(values.data(), static_cast<int64_t>(values.size()));
    return h;
}

TEST(QuantizeThresholds, HistogramCountsNonZeroMagnitudes)
{
    const std::vector<float> v = {0.f, -4.f, 1.f, 2.f, 0.f, 3.999f, -0.001f, NAN};
    const AbsHistogram h = histogram_of(v);
    EXPECT_EQ(h.absmax, 4.f);
    uint64_t total = 0;
    for (uint64_t c : h.counts) total += c;
    EXPECT_EQ(total, 5u); // zeros and NaN left out
    EXPECT_EQ(h.counts[kHistogramBins - 1], 2u); // 4 and 3.999
    EXPECT_EQ(h.counts[kHistogramBins / 4], 1u); // 1.0
    EXPECT_EQ(h.counts[kHistogramBins / 2], 1u); // 2.0
    EXPECT_EQ(h.counts[0], 1u);                  // 0.001
}

TEST(QuantizeThresholds, KlDivergenceOfKnownDistributions)
{
    EXPECT_DOUBLE_EQ(kl_divergence({1, 2, 3}, {2, 4, 6}), 0.0); // same after normalizing
    const double expected = 0.5 * std::log(0.5 / 0.25) + 0.5 * std::log(0.5 / 0.75);
    EXPECT_NEAR(kl_divergence({1, 1}, {1, 3}), expected, 1e-12);
    EXPECT_GT(kl_divergence({1, 1}, {1, 0}), 10.0); // mass where Q has none: large, finite
}

TEST(QuantizeThresholds, PercentileIsTheQuantileOfMagnitudes)
{
    std::vector<float> v;
    for (int i = 1; i <= 1000; ++i) v.push_back(i % 2 ? float(i) : -float(i));
    const AbsHistogram h = histogram_of(v);
    EXPECT_NEAR(percentile_threshold(h, 50.0), 500.f, h.bin_width() * 1.01f);
    EXPECT_NEAR(percentile_threshold(h, 90.0), 900.f, h.bin_width() * 1.01f);
    EXPECT_FLOAT_EQ(percentile_threshold(h, 100.0), 1000.f);
}

TEST(QuantizeThresholds, KlKeepsAFlatRangeAndClipsRareOutliers)
{
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> flat(-1.f, 1.f);
    std::vector<float> uniform(200000);
    for (float& x : uniform) x = flat(rng);
    const AbsHistogram hu = histogram_of(uniform);
    EXPECT_GT(kl_threshold(hu), 0.9f * hu.absmax); // nothing to gain by clipping a flat range

    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<float> tails(200000);
    for (float& x : tails) x = normal(rng);
    tails[0] = 60.f, tails[1] = -45.f; // two outliers stretch the range 15x
    const AbsHistogram ht = histogram_of(tails);
    const float t = kl_threshold(ht);
    EXPECT_LT(t, 10.f) << "the outliers should be clipped";
    EXPECT_GT(t, 2.5f) << "the bulk of the distribution should be kept";
}

TEST(QuantizeThresholds, EmptyHistogramKeepsTheRange)
{
    AbsHistogram h(0.f);
    const float zeros[4] = {};
    h.add(zeros, 4);
    EXPECT_EQ(kl_threshold(h), 0.f);
    EXPECT_EQ(percentile_threshold(h, 99.0), 0.f);
}

// --- quantize_net on a small network -----------------------------------------

Tensor random_values(Shape shape, uint32_t seed, float scale = 1.f)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-scale, scale);
    Tensor t(std::move(shape), DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
    return t;
}

// Input (4x6x6) -> Convolution 3x3 (8 outputs, output channel 5 all zero) ->
// ConvolutionDepthWise 3x3 (8 groups) -> ReLU -> InnerProduct (10).
Net small_net()
{
    Net net;
    ParamDict in;
    in.set_int(0, 6), in.set_int(1, 6), in.set_int(2, 4);
    net.add_layer("Input", "in", {}, {"x"}, in);
    ParamDict conv;
    conv.set_int(0, 8), conv.set_int(1, 3), conv.set_int(4, 1), conv.set_int(5, 1), conv.set_int(6, 8 * 4 * 9);
    Tensor w = random_values({8 * 4 * 9}, 1, 0.5f);
    std::fill_n(w.data<float>() + 5 * 36, 36, 0.f);
    net.add_layer("Convolution", "conv", {"x"}, {"c"}, conv, {w, random_values({8}, 2)});
    ParamDict dw;
    dw.set_int(0, 8), dw.set_int(1, 3), dw.set_int(4, 1), dw.set_int(5, 1), dw.set_int(6, 72), dw.set_int(7, 8);
    net.add_layer("ConvolutionDepthWise", "dw", {"c"}, {"d"}, dw, {random_values({72}, 3, 2.f), random_values({8}, 4)});
    net.add_layer("ReLU", "relu", {"d"}, {"r"});
    ParamDict ip;
    ip.set_int(0, 10), ip.set_int(1, 1), ip.set_int(2, 10 * 8 * 36);
    net.add_layer("InnerProduct", "fc", {"r"}, {"y"}, ip, {random_values({10 * 288}, 5, 0.1f), random_values({10}, 6)});
    net.finish_graph();
    return net;
}

std::vector<CalibrationSample> small_samples(int n, uint32_t seed)
{
    std::vector<CalibrationSample> s;
    for (int i = 0; i < n; ++i) s.push_back({{"x", random_values({4, 6, 6}, seed + i, 3.f)}});
    return s;
}

const Layer& layer_named(const Net& net, const std::string& name)
{
    for (const Layer& l : net.graph().layers)
        if (l.name == name) return l;
    throw std::runtime_error("no layer " + name);
}

// ncnn's float2int8, written out: round half away from zero, clamp to +-127.
int8_t naive_int8(float v) { return static_cast<int8_t>(std::max(-127.f, std::min(127.f, std::round(v)))); }

// The weights of `name` in `q` against a naive per-chunk quantizer of `f`'s.
void expect_rounded_per_chunk(const Net& f, const Net& q, const std::string& name, int chunks, int term,
                              float input_scale)
{
    const Layer& fl = layer_named(f, name);
    const Layer& ql = layer_named(q, name);
    EXPECT_EQ(ql.params.get_int(8, 0), term) << name;
    ASSERT_EQ(ql.weights.size(), fl.weights.size() + 2) << name;
    const Tensor& w = fl.weights[0].value;
    const Tensor& qw = ql.weights[0].value;
    ASSERT_EQ(qw.dtype(), DType::I8) << name;
    const Tensor& scales = ql.weights[fl.weights.size()].value;
    ASSERT_EQ(scales.numel(), chunks) << name;
    const int64_t per = w.numel() / chunks;
    for (int c = 0; c < chunks; ++c) {
        float absmax = 0;
        for (int64_t i = 0; i < per; ++i) absmax = std::max(absmax, std::fabs(w.data<float>()[c * per + i]));
        const float scale = absmax == 0 ? 1.f : 127.f / absmax;
        EXPECT_FLOAT_EQ(scales.data<float>()[c], scale) << name << " chunk " << c;
        for (int64_t i = 0; i < per; ++i)
            ASSERT_EQ(qw.data<int8_t>()[c * per + i], naive_int8(w.data<float>()[c * per + i] * scale))
                << name << " chunk " << c << " weight " << i;
    }
    EXPECT_FLOAT_EQ(ql.weights.back().value.data<float>()[0], input_scale) << name;
    if (fl.weights.size() > 1) { // the bias stays as it was
        EXPECT_EQ(0, std::memcmp(ql.weights[1].value.raw(), fl.weights[1].value.raw(), fl.weights[1].value.nbytes()));
    }
}

TEST(Quantize, MinMaxScalesAreTheLargestInputMagnitude)
{
    const Net net = small_net();
    const std::vector<CalibrationSample> samples = small_samples(5, 10);
    CalibrationOptions o;
    o.method = CalibrationMethod::MinMax;
    const std::map<std::string, float> scales = calibrate(net, samples, o);
    ASSERT_EQ(scales.size(), 3u); // the inputs of conv, dw and fc
    float x_max = 0, c_max = 0, r_max = 0;
    for (const CalibrationSample& s : samples) {
        Session session(net);
        session.set_input("x", s.at("x"));
        const std::vector<Tensor> t = session.run({"c", "r"});
        for (int64_t i = 0; i < s.at("x").numel(); ++i) x_max = std::max(x_max, std::fabs(s.at("x").data<float>()[i]));
        for (int64_t i = 0; i < t[0].numel(); ++i) c_max = std::max(c_max, std::fabs(t[0].data<float>()[i]));
        for (int64_t i = 0; i < t[1].numel(); ++i) r_max = std::max(r_max, std::fabs(t[1].data<float>()[i]));
    }
    EXPECT_FLOAT_EQ(scales.at("x"), 127.f / x_max);
    EXPECT_FLOAT_EQ(scales.at("c"), 127.f / c_max);
    EXPECT_FLOAT_EQ(scales.at("r"), 127.f / r_max);
}

TEST(Quantize, WeightsRoundPerOutputChannelAndGroup)
{
    const Net net = small_net();
    const std::map<std::string, float> scales = {{"x", 20.f}, {"c", 10.f}, {"r", 30.f}};
    Net q;
    EXPECT_EQ(quantize_net(net, scales, q, /*requantize=*/false), 3);
    expect_rounded_per_chunk(net, q, "conv", 8, 2, 20.f);
    expect_rounded_per_chunk(net, q, "dw", 8, 1, 10.f);
    expect_rounded_per_chunk(net, q, "fc", 10, 2, 30.f);
    // A layer whose input has no scale stays float.
    Net partial;
    EXPECT_EQ(quantize_net(net, {{"x", 20.f}}, partial, false), 1);
    EXPECT_EQ(layer_named(partial, "fc").params.get_int(8, 0), 0);
}

double cosine(const Tensor& a, const Tensor& b)
{
    EXPECT_EQ(a.numel(), b.numel());
    double ab = 0, aa = 0, bb = 0;
    for (int64_t i = 0; i < a.numel(); ++i) {
        const double x = a.data<float>()[i], y = b.data<float>()[i];
        ab += x * y, aa += x * x, bb += y * y;
    }
    return ab / std::sqrt(aa * bb);
}

Tensor run_one(const Net& net, const CalibrationSample& sample, const std::string& output)
{
    Session s(net);
    for (const auto& in : sample) s.set_input(in.first, in.second);
    return s.get(output);
}

TEST(Quantize, ConvolutionReadByAnInt8ConvolutionWritesInt8ForIt)
{
    const Net net = small_net();
    const std::map<std::string, float> scales = calibrate(net, small_samples(8, 100));
    Net chained, plain;
    quantize_net(net, scales, chained);
    quantize_net(net, scales, plain, false);
    const Layer& conv = layer_named(chained, "conv");
    EXPECT_EQ(conv.params.get_int(8, 0), 102);
    ASSERT_EQ(conv.weights.size(), 5u);
    EXPECT_FLOAT_EQ(conv.weights.back().value.data<float>()[0], scales.at("c")); // the reader's input scale
    EXPECT_EQ(layer_named(chained, "dw").params.get_int(8, 0), 1); // a ReLU reads it: float out
    // The int8 written for the next layer is what it would have quantized.
    for (const CalibrationSample& s : small_samples(3, 700)) {
        const Tensor a = run_one(chained, s, "y"), b = run_one(plain, s, "y");
        for (int64_t i = 0; i < a.numel(); ++i)
            EXPECT_NEAR(a.data<float>()[i], b.data<float>()[i], 1e-3f * (1.f + std::fabs(b.data<float>()[i])));
    }
}

TEST(Quantize, SmallNetworkFollowsTheFloatOne)
{
    const Net net = small_net();
    Net q;
    ASSERT_EQ(quantize_net(net, calibrate(net, small_samples(16, 100)), q), 3);
    for (const CalibrationSample& s : small_samples(4, 500))
        EXPECT_GT(cosine(run_one(net, s, "y"), run_one(q, s, "y")), 0.99);
    // A scale far off clips: the check above can fail.
    Net clipped;
    quantize_net(net, {{"x", 2000.f}, {"c", 2000.f}, {"r", 2000.f}}, clipped);
    EXPECT_LT(cosine(run_one(net, small_samples(1, 500)[0], "y"), run_one(clipped, small_samples(1, 500)[0], "y")), 0.99);
}

TEST(Quantize, RefusesNoSamplesAndLeavesResidualConvolutionsFloat)
{
    const Net net = small_net();
    EXPECT_THROW(calibrate(net, {}), Error);
    // A sample the model cannot take: the error says which.
    std::vector<CalibrationSample> samples = small_samples(3, 1);
    samples[1]["x"] = random_values({4, 6, 7}, 9);
    try {
        calibrate(net, samples);
        ADD_FAILURE() << "a wrong-shaped sample was taken";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("calibration sample 2 of 3"), std::string::npos) << e.what();
    }
    // A convolution with a fused residual input has no int8 form.
    Net r;
    ParamDict in;
    in.set_int(0, 4), in.set_int(1, 4), in.set_int(2, 2);
    r.add_layer("Input", "in", {}, {"x"}, in);
    ParamDict conv;
    conv.set_int(0, 2), conv.set_int(1, 1), conv.set_int(6, 4), conv.set_int(20, 1);
    r.add_layer("Convolution", "conv", {"x", "x"}, {"y"}, conv, {random_values({4}, 1)});
    r.finish_graph();
    EXPECT_FALSE(quantizable_layer(r, 1));
    Net q;
    EXPECT_EQ(quantize_net(r, {{"x", 10.f}}, q), 0);
}

TEST(Quantize, ModelsLoadWithResidualSumsKeptAsLayers)
{
#ifndef KESTREL_HAVE_ONNX
    GTEST_SKIP() << "built without the ONNX importer";
#else
    // kestrel quantize loads models with the fusions ncnn's format has, not
    // the residual one (int8 convolutions take no residual input).
    for (bool residuals : {true, false}) {
        Net net;
        LoadOptions lo;
        lo.fuse_residuals = residuals;
        net.set_load_options(lo);
        load_onnx(net, ktest::shared_path("models/resnet18/model.onnx"));
        int quantizable = 0, residual = 0;
        for (size_t li = 0; li < net.graph().layers.size(); ++li) {
            quantizable += quantizable_layer(net, static_cast<int>(li));
            const Layer& l = net.graph().layers[li];
            residual += l.type == "Convolution" && l.params.get_int(20, 0) != 0;
        }
        EXPECT_EQ(residual, residuals ? 8 : 0);
        EXPECT_EQ(quantizable, residuals ? 13 : 21);
    }
#endif
}

// --- the written files, walked by ncnn's rules --------------------------------

uint32_t u32_at(const std::string& bytes, size_t offset)
{
    uint32_t v = 0;
    std::memcpy(&v, bytes.data() + offset, 4);
    return v;
}

float f32_at(const std::string& bytes, size_t offset)
{
    float v = 0;
    std::memcpy(&v, bytes.data() + offset, 4);
    return v;
}

// Reads a .param's layers and walks the .bin as ncnn would for the layer
// types of these networks (docs: ncnn-compat-spec, Convolution,
// ConvolutionDepthWise, InnerProduct): int8-tagged weights padded to 4 bytes,
// the float bias, then raw weight scales and the bottom scale. Fails on any
// other layer with weights, and unless the walk ends at the file's end.
void expect_ncnn_int8_files(const std::string& param_text, const std::string& bin, int expected_int8_layers)
{
    std::istringstream in(param_text);
    std::string line;
    std::getline(in, line);
    ASSERT_EQ(line, "7767517");
    std::getline(in, line); // layer and blob counts
    size_t at = 0;
    int int8_layers = 0;
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string type, name;
        int nb = 0, nt = 0;
        if (!(f >> type >> name >> nb >> nt)) continue;
        std::map<int, std::string> p;
        for (std::string tok; f >> tok;)
            if (const size_t eq = tok.find('='); eq != std::string::npos && tok[0] != '-')
                p[std::stoi(tok.substr(0, eq))] = tok.substr(eq + 1);
        auto param = [&](int id, int def) { return p.count(id) ? std::stoi(p[id]) : def; };
        const bool conv = type == "Convolution" || type == "ConvolutionDepthWise";
        if (!conv && type != "InnerProduct") continue; // no weights in these networks but these
        const int outputs = param(0, 0);
        const int weights = conv ? param(6, 0) : param(2, 0);
        const bool bias = conv ? param(5, 0) != 0 : param(1, 0) != 0;
        const int term = param(8, 0);
        ASSERT_NE(term, 0) << name << ": not int8";
        ++int8_layers;
        ASSERT_LE(at + 4, bin.size()) << name;
        EXPECT_EQ(u32_at(bin, at), 0x000D4B38u) << name << ": the int8 tag";
        at += 4 + (size_t(weights) + 3) / 4 * 4;
        if (bias) at += 4 * size_t(outputs);
        const int scales = type == "ConvolutionDepthWise" ? (term % 100 == 1 ? param(7, 1) : 1) : outputs;
        ASSERT_LE(at + 4 * size_t(scales) + 4, bin.size()) << name;
        for (int s = 0; s < scales; ++s) {
            const float v = f32_at(bin, at + 4 * size_t(s));
            EXPECT_TRUE(std::isfinite(v) && v > 0) << name << " weight scale " << s << " = " << v;
        }
        at += 4 * size_t(scales);
        EXPECT_GT(f32_at(bin, at), 0.f) << name << ": bottom scale";
        at += 4;
        if (term > 100) at += 4;
    }
    EXPECT_EQ(at, bin.size()) << "the walk should end at the end of the .bin";
    EXPECT_EQ(int8_layers, expected_int8_layers);
}

TEST(Quantize, WrittenFilesFollowNcnnInt8Layout)
{
    const Net net = small_net();
    Net q;
    quantize_net(net, calibrate(net, small_samples(4, 100)), q);
    const ktest::TempDir dir;
    q.save_param(dir.file("q.param"));
    q.save_model(dir.file("q.bin"));
    expect_ncnn_int8_files(ktest::read_file(dir.file("q.param")), ktest::read_file(dir.file("q.bin")), 3);
}

// --- whole networks ------------------------------------------------------------

// Smooth pictures (sinusoid gratings and soft blobs per channel, scaled to
// [0, 1]) normalized with ImageNet's mean and deviation: inputs with the
// structure natural images have, from a seed.
std::vector<Tensor> generated_pictures(int count, uint32_t seed)
{
    constexpr int kSize = 224;
    const float mean[3] = {0.485f, 0.456f, 0.406f}, deviation[3] = {0.229f, 0.224f, 0.225f};
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::vector<Tensor> pictures;
    std::vector<float> row_sin(kSize), row_cos(kSize), col_sin(kSize), col_cos(kSize), row_g(kSize), col_g(kSize);
    for (int n = 0; n < count; ++n) {
        Tensor t({3, kSize, kSize}, DType::F32);
        for (int c = 0; c < 3; ++c) {
            float* p = t.data<float>() + c * kSize * kSize;
            std::fill_n(p, kSize * kSize, 0.f);
            for (int k = 0; k < 4; ++k) { // sin(a(y) + b(x)) = sin a cos b + cos a sin b
                const float fy = 0.5f + 5.5f * u(rng), fx = 0.5f + 5.5f * u(rng), phase = 6.283f * u(rng);
                const float amp = 0.2f + 0.8f * u(rng);
                for (int i = 0; i < kSize; ++i) {
                    row_sin[i] = std::sin(6.283f * fy * i / kSize + phase), row_cos[i] = std::cos(6.283f * fy * i / kSize + phase);
                    col_sin[i] = std::sin(6.283f * fx * i / kSize), col_cos[i] = std::cos(6.283f * fx * i / kSize);
                }
                for (int y = 0; y < kSize; ++y)
                    for (int x = 0; x < kSize; ++x)
                        p[y * kSize + x] += amp * (row_sin[y] * col_cos[x] + row_cos[y] * col_sin[x]);
            }
            for (int k = 0; k < 3; ++k) { // separable Gaussian blobs
                const float cy = u(rng), cx = u(rng), r = 0.05f + 0.2f * u(rng), amp = 3.f * u(rng) - 1.5f;
                for (int i = 0; i < kSize; ++i) {
                    const float d = float(i) / kSize;
                    row_g[i] = std::exp(-(d - cy) * (d - cy) / (2 * r * r));
                    col_g[i] = std::exp(-(d - cx) * (d - cx) / (2 * r * r));
                }
                for (int y = 0; y < kSize; ++y)
                    for (int x = 0; x < kSize; ++x) p[y * kSize + x] += amp * row_g[y] * col_g[x];
            }
            const auto range = std::minmax_element(p, p + kSize * kSize);
            const float lo = *range.first, span = *range.second - *range.first;
            for (int i = 0; i < kSize * kSize; ++i) p[i] = ((p[i] - lo) / span - mean[c]) / deviation[c];
        }
        pictures.push_back(t);
    }
    return pictures;
}

const std::vector<Tensor>& calibration_pictures()
{
    static const std::vector<Tensor> p = generated_pictures(64, 2026);
    return p;
}

const std::vector<Tensor>& held_out_pictures()
{
    static const std::vector<Tensor> p = generated_pictures(16, 1127);
    return p;
}

struct NetworkCase {
    const char* model;
    bool onnx;
    CalibrationMethod method;
    int int8_layers;
};

void PrintTo(const NetworkCase& c, std::ostream* os) { *os << c.model << (c.onnx ? " (ONNX)" : " (ncnn)"); }

std::string case_name(const ::testing::TestParamInfo<NetworkCase>& info)
{
    return std::string(info.param.model) + (info.param.onnx ? "_onnx" : "_ncnn");
}

class QuantizeNetwork : public ::testing::TestWithParam<NetworkCase> {
protected:
    // The float model as `kestrel quantize` loads it: residual sums kept as
    // layers, an ONNX model in ncnn's conventions.
    void load(Net& net) const
    {
        LoadOptions lo;
        lo.fuse_residuals = false;
        net.set_load_options(lo);
        const std::string dir = ktest::shared_path(std::string("models/") + GetParam().model + "/");
        if (GetParam().onnx) {
#ifdef KESTREL_HAVE_ONNX
            Net onnx;
            onnx.set_load_options(lo);
            load_onnx(onnx, dir + "model.onnx");
            net = ncnn_form(onnx);
#endif
        } else {
            net.load_param(dir + "ncnn.param");
            net.load_model(dir + "ncnn.bin");
        }
    }

    std::vector<CalibrationSample> samples(const std::vector<Tensor>& pictures, const std::string& input) const
    {
        std::vector<CalibrationSample> s;
        for (const Tensor& p : pictures)
            s.push_back({{input, p}});
        return s;
    }
};

TEST_P(QuantizeNetwork, Int8FollowsFloatOnHeldOutInputs)
{
#ifndef KESTREL_HAVE_ONNX
    if (GetParam().onnx) GTEST_SKIP() << "built without the ONNX importer";
#endif
    Net net;
    load(net);
    const std::string input = net.input_names().at(0), output = net.output_names().at(0);
    CalibrationOptions o;
    o.method = GetParam().method;
    Net int8_net;
    ASSERT_EQ(quantize_net(net, calibrate(net, samples(calibration_pictures(), input), o), int8_net),
              GetParam().int8_layers);

    // The written model loads and gives what the in-memory one gives.
    const ktest::TempDir dir;
    int8_net.save_param(dir.file("int8.param"));
    int8_net.save_model(dir.file("int8.bin"));
    expect_ncnn_int8_files(ktest::read_file(dir.file("int8.param")), ktest::read_file(dir.file("int8.bin")),
                           GetParam().int8_layers);
    EXPECT_TRUE(ktest::follows_ncnn_param_rules(ktest::read_file(dir.file("int8.param"))));
    Net loaded;
    loaded.load_param(dir.file("int8.param"));
    loaded.load_model(dir.file("int8.bin"));

    const std::vector<CalibrationSample> held_out = samples(held_out_pictures(), input);
    std::vector<Tensor> want, got;
    for (const CalibrationSample& s : held_out) {
        want.push_back(run_one(net, s, output));
        got.push_back(run_one(loaded, s, output));
        EXPECT_GE(cosine(want.back(), got.back()), 0.99) << "held-out input " << want.size() - 1;
    }
    const Tensor in_memory = run_one(int8_net, held_out[0], output);
    EXPECT_EQ(0, std::memcmp(in_memory.raw(), got[0].raw(), in_memory.nbytes()));

    // resnet18's outputs vary with the input (mobilenet_v2's random weights
    // make its outputs nearly constant): there the part of each output that
    // differs from the mean output must follow too.
    if (std::string(GetParam().model) == "resnet18") {
        Tensor mean = Tensor::zeros(want[0].shape(), DType::F32);
        for (const Tensor& w : want)
            for (int64_t i = 0; i < w.numel(); ++i) mean.data<float>()[i] += w.data<float>()[i] / want.size();
        double sum = 0;
        for (size_t k = 0; k < want.size(); ++k) {
            Tensor dw = want[k].clone(), dg = got[k].clone();
            for (int64_t i = 0; i < dw.numel(); ++i)
                dw.data<float>()[i] -= mean.data<float>()[i], dg.data<float>()[i] -= mean.data<float>()[i];
            const double c = cosine(dw, dg);
            EXPECT_GE(c, 0.8) << "held-out input " << k << ", centered";
            sum += c;
        }
        EXPECT_GE(sum / double(want.size()), 0.9) << "mean centered cosine";
    }
}

INSTANTIATE_TEST_SUITE_P(SharedModels, QuantizeNetwork,
                         ::testing::Values(NetworkCase{"resnet18", false, CalibrationMethod::KL, 21},
                                           NetworkCase{"mobilenet_v2", false, CalibrationMethod::KL, 53},
                                           NetworkCase{"resnet18", true, CalibrationMethod::Percentile, 21},
                                           NetworkCase{"mobilenet_v2", true, CalibrationMethod::MinMax, 53}),
                         case_name);

// --- the command ---------------------------------------------------------------

TEST(QuantizeCommand, WritesAModelAndReportsAgreement)
{
    const ktest::TempDir dir;
    const Net net = small_net();
    net.save_param(dir.file("small.param"));
    net.save_model(dir.file("small.bin"));
    std::filesystem::create_directory(dir.file("cal"));
    int k = 0;
    for (const CalibrationSample& s : small_samples(6, 40)) write_npy(dir.file("cal/" + std::to_string(k++) + ".npy"), s.at("x"));
    ktest::write_file(dir.file("cal/README"), std::string("not a sample"));
    const ktest::CliResult r = ktest::run_cli({"quantize", dir.file("small.param"), dir.file("q.param"),
                                               dir.file("q.bin"), "--calibration", dir.file("cal"), "--method",
                                               "percentile", "--percentile", "99.9"});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_NE(r.out.find("made 3 of 3"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("6 calibration samples"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("y: cosine mean 0.99"), std::string::npos) << r.out;
    Net q;
    q.load_param(dir.file("q.param"));
    q.load_model(dir.file("q.bin"));
    EXPECT_EQ(layer_named(q, "conv").params.get_int(8, 0), 102); // requantized for the depthwise layer
    const ktest::CliResult plain = ktest::run_cli({"quantize", dir.file("small.param"), dir.file("p.param"),
                                                   dir.file("p.bin"), "--calibration", dir.file("cal"),
                                                   "--no-requantize"});
    ASSERT_EQ(plain.exit_code, 0) << plain.describe();
    Net p;
    p.load_param(dir.file("p.param"));
    EXPECT_EQ(layer_named(p, "conv").params.get_int(8, 0), 2);

    EXPECT_EQ(ktest::run_cli({"quantize", dir.file("small.param"), dir.file("q.param"), dir.file("q.bin")}).exit_code, 2);
    EXPECT_EQ(ktest::run_cli({"quantize", dir.file("small.param"), dir.file("q.param"), dir.file("q.bin"),
                              "--calibration", dir.file("cal"), "--method", "median"})
                  .exit_code,
              2);
    std::filesystem::create_directory(dir.file("empty"));
    const ktest::CliResult empty = ktest::run_cli({"quantize", dir.file("small.param"), dir.file("q.param"),
                                                   dir.file("q.bin"), "--calibration", dir.file("empty")});
    EXPECT_EQ(empty.exit_code, 1) << empty.describe();
    EXPECT_NE(empty.err.find(dir.file("empty") + ": no samples"), std::string::npos) << empty.err;
}

#ifdef KESTREL_HAVE_ONNX
TEST(QuantizeCommand, OnnxModelsAreWrittenForNcnnWhereTheyHaveAnNcnnForm)
{
    const ktest::TempDir dir;
    std::filesystem::create_directory(dir.file("cal"));
    int k = 0;
    for (const Tensor& p : generated_pictures(3, 77))
        write_npy(dir.file("cal/" + std::to_string(k++) + ".npy"), p.reshaped({1, 3, 224, 224})); // ONNX's shape
    const ktest::CliResult r = ktest::run_cli({"quantize", ktest::shared_path("models/mobilenet_v2/model.onnx"),
                                               dir.file("q.param"), dir.file("q.bin"), "--calibration",
                                               dir.file("cal")});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_NE(r.out.find("made 53 of 53"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("output: cosine mean 0.99"), std::string::npos) << r.out;
    const std::string param = ktest::read_file(dir.file("q.param"));
    EXPECT_TRUE(ktest::follows_ncnn_param_rules(param));
    EXPECT_NE(param.find("Input input 0 1 input 0=224 1=224 2=3\n"), std::string::npos);

    const ktest::CliResult kept = ktest::run_cli({"quantize",
                                                  ktest::shared_path("models/shufflenet_v2_x0_5/model.onnx"),
                                                  dir.file("s.param"), dir.file("s.bin"), "--calibration",
                                                  dir.file("cal")});
    ASSERT_EQ(kept.exit_code, 0) << kept.describe();
    EXPECT_NE(kept.out.find("stays in Kestrel's form"), std::string::npos) << kept.out;
    EXPECT_NE(kept.out.find("has no ncnn form"), std::string::npos) << kept.out;
}
#endif

} // namespace
