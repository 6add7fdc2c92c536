// N-d convolution and pooling: Convolution1D/3D, ConvolutionDepthWise1D/3D,
// Deconvolution1D/3D (ncnn params, constant and input weights), the ONNX
// MaxPool/AveragePool/MaxUnpool layers, and a batched layer whose weight input
// is shared by every sample. Every expected value comes from naive loops
// written here from the formulas (a 3-D loop nest; 1-D and 2-D cases are its
// special case with unit outer axes), in double precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kestrel/kestrel.h"
#include "layer_test_util.h"

using namespace kestrel;

namespace {

Tensor random_tensor(const Shape& shape, uint32_t seed) { return layer_test::random_f32(shape, seed, -1.f, 1.f); }

ParamDict ints(std::initializer_list<std::pair<int, int>> values)
{
    ParamDict pd;
    for (const auto& [id, v] : values) pd.set_int(id, v);
    return pd;
}

// Runs one layer through Net + Session; outputs y0, y1, ...
std::vector<Tensor> run(const std::string& type, const ParamDict& pd, const std::vector<Tensor>& weights,
                        const std::vector<Tensor>& inputs, int outputs = 1, int threads = 1)
{
    Net net;
    std::vector<std::string> names, tops;
    for (size_t i = 0; i < inputs.size(); ++i) {
        names.push_back("x" + std::to_string(i));
        net.add_layer("Input", "in" + std::to_string(i), {}, {names.back()});
    }
    for (int i = 0; i < outputs; ++i) tops.push_back("y" + std::to_string(i));
    net.add_layer(type, "op", names, tops, pd, weights);
    net.finish_graph();
    Options o;
    o.threads = threads;
    Session s(net, o);
    for (size_t i = 0; i < inputs.size(); ++i) s.set_input(names[i], inputs[i]);
    std::vector<Tensor> out;
    for (const std::string& t : tops) out.push_back(s.get(t));
    return out;
}

void expect_close(const Tensor& got, const std::vector<double>& ref, const Shape& shape)
{
    ASSERT_EQ(got.shape(), shape);
    ASSERT_EQ(static_cast<size_t>(got.numel()), ref.size());
    int bad = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double g = got.dtype() == DType::F32 ? got.data<float>()[i] : got.data<double>()[i];
        if (!(std::fabs(g - ref[i]) <= 1e-4 + 1e-4 * std::fabs(ref[i])) && ++bad <= 5)
            ADD_FAILURE() << "element " << i << ": got " << g << ", expected " << ref[i];
    }
    EXPECT_EQ(bad, 0);
}

// Window settings of the 3-D reference, outermost axis (d) first.
struct Win3 {
    int k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
};

// Convolution: x (C, D, H, W), w (M, C/g, kd, kh, kw).
std::vector<double> ref_conv(const Tensor& x, const Tensor& w, const float* bias, int group, const Win3& win,
                             Shape& out_shape, double pad_value = 0.0)
{
    const int64_t C = x.dim(0), M = w.dim(0), cg = C / group, mg = M / group;
    int64_t in[3] = {x.dim(1), x.dim(2), x.dim(3)}, o[3];
    for (int a = 0; a < 3; ++a) o[a] = (in[a] + win.pb[a] + win.pe[a] - win.dil[a] * (win.k[a] - 1) - 1) / win.s[a] + 1;
    out_shape = {M, o[0], o[1], o[2]};
    std::vector<double> y;
    for (int64_t m = 0; m < M; ++m)
        for (int64_t od = 0; od < o[0]; ++od)
            for (int64_t oh = 0; oh < o[1]; ++oh)
                for (int64_t ow = 0; ow < o[2]; ++ow) {
                    double sum = bias ? bias[m] : 0.0;
                    for (int64_t c = 0; c < cg; ++c)
                        for (int kd = 0; kd < win.k[0]; ++kd)
                            for (int kh = 0; kh < win.k[1]; ++kh)
                                for (int kw = 0; kw < win.k[2]; ++kw) {
                                    const int64_t id = od * win.s[0] - win.pb[0] + kd * win.dil[0];
                                    const int64_t ih = oh * win.s[1] - win.pb[1] + kh * win.dil[1];
                                    const int64_t iw = ow * win.s[2] - win.pb[2] + kw * win.dil[2];
                                    const bool outside = id < 0 || ih < 0 || iw < 0 || id >= in[0] || ih >= in[1] ||
                                                         iw >= in[2];
                                    const int64_t ic = m / mg * cg + c;
                                    const double v =
                                        outside ? pad_value
                                                : double(x.data<float>()[((ic * in[0] + id) * in[1] + ih) * in[2] + iw]);
                                    sum += v * w.data<float>()[(((m * cg + c) * win.k[0] + kd) * win.k[1] + kh) *
                                                                   win.k[2] + kw];
                                }
                    y.push_back(sum);
                }
    return y;
}

// Transposed convolution: x (C, D, H, W), w in ONNX order (C, M/g, kd, kh, kw);
// full output (in-1)*s + dil*(k-1) + 1 + out_pad, then cut pb at the start and pe at the end.
std::vector<double> ref_deconv(const Tensor& x, const Tensor& w, const float* bias, int group, const Win3& win,
                               const int out_pad[3], Shape& out_shape)
{
    const int64_t C = x.dim(0), mg = w.dim(1), M = mg * group, cg = C / group;
    int64_t in[3] = {x.dim(1), x.dim(2), x.dim(3)}, full[3], o[3];
    for (int a = 0; a < 3; ++a) {
        full[a] = (in[a] - 1) * win.s[a] + win.dil[a] * (win.k[a] - 1) + 1 + out_pad[a];
        o[a] = full[a] - win.pb[a] - win.pe[a];
    }
    out_shape = {M, o[0], o[1], o[2]};
    std::vector<double> y(static_cast<size_t>(M * o[0] * o[1] * o[2]), 0.0);
    for (int64_t m = 0; m < M; ++m) {
        for (int64_t i = 0; i < o[0] * o[1] * o[2]; ++i) y[static_cast<size_t>(m * o[0] * o[1] * o[2] + i)] = bias ? bias[m] : 0.0;
        for (int64_t c = 0; c < cg; ++c) {
            const int64_t ic = m / mg * cg + c;
            for (int64_t id = 0; id < in[0]; ++id)
                for (int64_t ih = 0; ih < in[1]; ++ih)
                    for (int64_t iw = 0; iw < in[2]; ++iw)
                        for (int kd = 0; kd < win.k[0]; ++kd)
                            for (int kh = 0; kh < win.k[1]; ++kh)
                                for (int kw = 0; kw < win.k[2]; ++kw) {
                                    const int64_t od = id * win.s[0] + kd * win.dil[0] - win.pb[0];
                                    const int64_t oh = ih * win.s[1] + kh * win.dil[1] - win.pb[1];
                                    const int64_t ow = iw * win.s[2] + kw * win.dil[2] - win.pb[2];
                                    if (od < 0 || oh < 0 || ow < 0 || od >= o[0] || oh >= o[1] || ow >= o[2]) continue;
                                    y[static_cast<size_t>(((m * o[0] + od) * o[1] + oh) * o[2] + ow)] +=
                                        double(x.data<float>()[((ic * in[0] + id) * in[1] + ih) * in[2] + iw]) *
                                        w.data<float>()[((((ic * mg) + m % mg) * win.k[0] + kd) * win.k[1] + kh) *
                                                            win.k[2] + kw];
                                }
        }
    }
    return y;
}

// Pooling over planes (P, D, H, W) with output sizes o; max over the taps
// inside the input (and the flat index of the first maximum), average over
// them divided by the taps inside [lo, hi) per axis.
struct PoolRef {
    std::vector<double> values;
    std::vector<int64_t> index; // row-major within the plane, plus plane * plane size
};
PoolRef ref_pool(const Tensor& x, bool max, const Win3& win, const int64_t o[3], const int64_t lo[3],
                 const int64_t hi[3])
{
    const int64_t P = x.dim(0), in[3] = {x.dim(1), x.dim(2), x.dim(3)}, plane = in[0] * in[1] * in[2];
    PoolRef r;
    for (int64_t p = 0; p < P; ++p)
        for (int64_t od = 0; od < o[0]; ++od)
            for (int64_t oh = 0; oh < o[1]; ++oh)
                for (int64_t ow = 0; ow < o[2]; ++ow) {
                    double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
                    int64_t best_at = 0, count = 0;
                    for (int kd = 0; kd < win.k[0]; ++kd)
                        for (int kh = 0; kh < win.k[1]; ++kh)
                            for (int kw = 0; kw < win.k[2]; ++kw) {
                                const int64_t c[3] = {od * win.s[0] - win.pb[0] + kd * win.dil[0],
                                                      oh * win.s[1] - win.pb[1] + kh * win.dil[1],
                                                      ow * win.s[2] - win.pb[2] + kw * win.dil[2]};
                                bool counted = true, inside = true;
                                for (int a = 0; a < 3; ++a) {
                                    counted = counted && c[a] >= lo[a] && c[a] < hi[a];
                                    inside = inside && c[a] >= 0 && c[a] < in[a];
                                }
                                count += counted;
                                if (!inside) continue;
                                const int64_t at = (c[0] * in[1] + c[1]) * in[2] + c[2];
                                const double v = x.data<float>()[p * plane + at];
                                sum += v;
                                if (v > best) best = v, best_at = at;
                            }
                    r.values.push_back(max ? best : sum / double(count));
                    r.index.push_back(p * plane + best_at);
                }
    return r;
}

Shape drop_unit_axes(const Shape& s, size_t keep_spatial)
{
    Shape out = {s[0]};
    out.insert(out.end(), s.end() - static_cast<int64_t>(keep_spatial), s.end());
    return out;
}

// ---------------------------------------------------------------- Convolution1D / 3D

TEST(ConvolutionNd, Conv1DConstantWeightsPadsStrideDilationBias)
{
    const Tensor x = random_tensor({3, 11}, 1), w = random_tensor({4, 3, 3}, 2), b = random_tensor({4}, 3);
    Win3 win;
    win.k[2] = 3, win.s[2] = 2, win.dil[2] = 2, win.pb[2] = 2, win.pe[2] = 1;
    Shape shape;
    const auto ref = ref_conv(x.reshaped({3, 1, 1, 11}), w.reshaped({4, 3, 1, 1, 3}), b.data<float>(), 1, win, shape);
    const ParamDict pd = ints({{0, 4}, {1, 3}, {2, 2}, {3, 2}, {4, 2}, {15, 1}, {5, 1}, {6, 36}});
    expect_close(run("Convolution1D", pd, {w.reshaped({36}), b}, {x})[0], ref, drop_unit_axes(shape, 1));
}

TEST(ConvolutionNd, DepthWise1DWithWeightInputAndSameUpper)
{
    // group 2: 4 input channels, 6 outputs; SAME_UPPER with stride 2 on 9 -> 5 outputs.
    const Tensor x = random_tensor({4, 9}, 4), w = random_tensor({6, 2, 4}, 5);
    Win3 win;
    win.k[2] = 4, win.s[2] = 2, win.pb[2] = 1, win.pe[2] = 2; // total (5-1)*2+4-9 = 3, the odd one at the end
    Shape shape;
    const auto ref = ref_conv(x.reshaped({4, 1, 1, 9}), w.reshaped({6, 2, 1, 1, 4}), nullptr, 2, win, shape);
    const ParamDict pd = ints({{0, 6}, {3, 2}, {4, -233}, {7, 2}, {19, 1}});
    expect_close(run("ConvolutionDepthWise1D", pd, {}, {x, w})[0], ref, drop_unit_axes(shape, 1));
}

TEST(ConvolutionNd, Conv3DWeightAndBiasInputsSameLowerAndPadValue)
{
    const Tensor x = random_tensor({2, 4, 5, 6}, 6), w = random_tensor({3, 2, 2, 3, 2}, 7), b = random_tensor({3}, 8);
    // SAME_LOWER, stride 1: totals 1, 2, 1 with the odd one at the start.
    Win3 win;
    for (int a = 0; a < 3; ++a) win.k[a] = static_cast<int>(w.dim(a + 2));
    win.pb[0] = 1, win.pe[0] = 0, win.pb[1] = 1, win.pe[1] = 1, win.pb[2] = 1, win.pe[2] = 0;
    Shape shape;
    const auto ref = ref_conv(x, w, b.data<float>(), 1, win, shape, 0.5);
    ParamDict pd = ints({{4, -234}, {5, 1}, {19, 1}});
    pd.set_float(18, 0.5f);
    expect_close(run("Convolution3D", pd, {}, {x, w, b})[0], ref, shape);
}

TEST(ConvolutionNd, Conv3DConstantWeightsPerAxisParamsAndActivation)
{
    const Tensor x = random_tensor({2, 5, 6, 7}, 9), w = random_tensor({2, 2, 3, 2, 3}, 10);
    Win3 win;
    win.k[0] = 3, win.k[1] = 2, win.k[2] = 3;      // ids 21, 11, 1
    win.s[0] = 2, win.s[1] = 1, win.s[2] = 2;      // ids 23, 13, 3
    win.dil[0] = 1, win.dil[1] = 2, win.dil[2] = 1; // ids 22, 12, 2
    win.pb[0] = 1, win.pe[0] = 0, win.pb[1] = 0, win.pe[1] = 2, win.pb[2] = 1, win.pe[2] = 1;
    Shape shape;
    auto ref = ref_conv(x, w, nullptr, 1, win, shape);
    for (double& v : ref) v = std::max(v, 0.0); // ReLU (9=1)
    const ParamDict pd = ints({{0, 2}, {1, 3}, {11, 2}, {21, 3}, {3, 2}, {13, 1}, {23, 2}, {2, 1}, {12, 2}, {22, 1},
                               {4, 1}, {15, 1}, {14, 0}, {16, 2}, {24, 1}, {17, 0}, {6, 72}, {9, 1}});
    expect_close(run("Convolution3D", pd, {w.reshaped({72})}, {x})[0], ref, shape);
}

// ---------------------------------------------------------------- Deconvolution1D / 3D

TEST(DeconvolutionNd, Deconv1DConstantWeightsPadsAndOutputPad)
{
    const Tensor x = random_tensor({2, 5}, 11), w_onnx = random_tensor({2, 3, 3}, 12), b = random_tensor({3}, 13);
    Win3 win;
    win.k[2] = 3, win.s[2] = 3, win.dil[2] = 2, win.pb[2] = 1, win.pe[2] = 2;
    const int out_pad[3] = {0, 0, 1};
    Shape shape;
    const auto ref = ref_deconv(x.reshaped({2, 1, 1, 5}), w_onnx.reshaped({2, 3, 1, 1, 3}), b.data<float>(), 1, win,
                                out_pad, shape);
    // ncnn weight order: [outch][inch][k].
    Tensor w(Shape{18}, DType::F32);
    for (int m = 0; m < 3; ++m)
        for (int c = 0; c < 2; ++c)
            for (int k = 0; k < 3; ++k) w.data<float>()[(m * 2 + c) * 3 + k] = w_onnx.data<float>()[(c * 3 + m) * 3 + k];
    const ParamDict pd = ints({{0, 3}, {1, 3}, {2, 2}, {3, 3}, {4, 1}, {15, 2}, {18, 1}, {5, 1}, {6, 18}});
    expect_close(run("Deconvolution1D", pd, {w, b}, {x})[0], ref, drop_unit_axes(shape, 1));
}

TEST(DeconvolutionNd, DepthWise3DWeightInputCutToOutputSize)
{
    // group 2, 4 inputs, 2 outputs per group; full 7x5x9 cut to 6x4x8 with SAME_UPPER (cut 1 at the end).
    const Tensor x = random_tensor({4, 3, 2, 4}, 14), w = random_tensor({4, 2, 3, 2, 3}, 15);
    Win3 win;
    win.k[0] = 3, win.k[1] = 2, win.k[2] = 3, win.s[0] = 2, win.s[1] = 3, win.s[2] = 2;
    win.pe[0] = 1, win.pe[1] = 1, win.pe[2] = 1; // cut 1 with the odd position at the end (upper: start cut = 1/2 = 0)
    const int out_pad[3] = {0, 0, 0};
    Shape shape;
    const auto ref = ref_deconv(x, w, nullptr, 2, win, out_pad, shape);
    ASSERT_EQ(shape, (Shape{4, 6, 4, 8}));
    const ParamDict pd = ints({{3, 2}, {13, 3}, {23, 2}, {4, -233}, {7, 2}, {25, 8}, {26, 4}, {27, 6}, {28, 1}});
    expect_close(run("DeconvolutionDepthWise3D", pd, {}, {x, w})[0], ref, shape);
}

// ---------------------------------------------------------------- a batched layer with a shared weight input

TEST(ConvolutionNd, BatchedLayerSharesTheWeightInputAcrossSamples)
{
    const Tensor x = random_tensor({3, 2, 7}, 16), w = random_tensor({4, 2, 3}, 17);
    Win3 win;
    win.k[2] = 3;
    std::vector<double> ref;
    Shape shape;
    for (int n = 0; n < 3; ++n) {
        const Tensor xn = Tensor::wrap(const_cast<float*>(x.data<float>()) + n * 14, {2, 1, 1, 7});
        const auto r = ref_conv(xn, w.reshaped({4, 2, 1, 1, 3}), nullptr, 1, win, shape);
        ref.insert(ref.end(), r.begin(), r.end());
    }
    const ParamDict pd = ints({{19, 1}, {31, 65536 | 131072}});
    expect_close(run("Convolution1D", pd, {}, {x, w}, 1, 2)[0], ref, {3, 4, 5});
}

// ---------------------------------------------------------------- MaxPool / AveragePool

// ONNX's window from param `first` on: Pooling's ONNX form (21) or MaxUnpool (0).
ParamDict window_params(std::vector<int> kernel, std::vector<int> strides, std::vector<int> pads, std::vector<int> dil,
                        int first)
{
    ParamDict pd;
    pd.set_ints(first, std::move(kernel));
    if (!strides.empty()) pd.set_ints(first + 1, std::move(strides));
    if (!pads.empty()) pd.set_ints(first + 2, std::move(pads));
    if (!dil.empty()) pd.set_ints(first + 3, std::move(dil));
    return pd;
}

// Pooling's ONNX form (MaxPool, AveragePool).
ParamDict pool_params(bool max, std::vector<int> kernel, std::vector<int> strides, std::vector<int> pads,
                      std::vector<int> dil)
{
    ParamDict pd = window_params(std::move(kernel), std::move(strides), std::move(pads), std::move(dil), 21);
    pd.set_int(0, max ? 0 : 1);
    pd.set_int(20, 1);
    return pd;
}

TEST(OnnxPool, MaxPool2DDilatedCeilModeWithIndicesBothOrders)
{
    const Tensor x = random_tensor({2, 3, 7, 8}, 18);
    // kernel 2x3, stride 2, dilation 2x1, pads (1,0)/(0,1), ceil_mode:
    // H: span 7+1-3 = 5 -> ceil(5/2)+1 = 4; W: 8+1-3 = 6 -> 3+1 = 4.
    Win3 win;
    win.k[1] = 2, win.k[2] = 3, win.s[1] = 2, win.s[2] = 2, win.dil[1] = 2, win.pb[1] = 1, win.pb[2] = 0;
    const int64_t o[3] = {1, 4, 4}, lo[3] = {0, 0, 0}, hi[3] = {1, 7, 8};
    const PoolRef r = ref_pool(x.reshaped({6, 1, 7, 8}), true, win, o, lo, hi);
    for (int order : {0, 1}) {
        ParamDict pd = pool_params(true, {2, 3}, {2, 2}, {1, 0, 0, 1}, {2, 1});
        pd.set_int(25, 1); // ceil_mode
        pd.set_int(27, order);
        const auto y = run("Pooling", pd, {}, {x}, 2);
        expect_close(y[0], r.values, {2, 3, 4, 4});
        ASSERT_EQ(y[1].dtype(), DType::I64);
        ASSERT_EQ(y[1].shape(), (Shape{2, 3, 4, 4}));
        for (size_t i = 0; i < r.index.size(); ++i) {
            int64_t expected = r.index[i];
            if (order == 1) { // spatial axes column-major: w * H + h within the plane
                const int64_t plane = expected / 56, hw = expected % 56;
                expected = plane * 56 + (hw % 8) * 7 + hw / 8;
            }
            EXPECT_EQ(y[1].data<int64_t>()[i], expected) << "order " << order << " element " << i;
        }
    }
}

TEST(OnnxPool, MaxPoolOnUint8)
{
    Tensor x({1, 1, 3, 4}, DType::U8);
    for (int i = 0; i < 12; ++i) x.data<uint8_t>()[i] = static_cast<uint8_t>((i * 37) % 251);
    const auto y = run("Pooling", pool_params(true, {2, 2}, {1, 2}, {}, {}), {}, {x})[0];
    ASSERT_EQ(y.dtype(), DType::U8);
    ASSERT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
    for (int oh = 0; oh < 2; ++oh)
        for (int ow = 0; ow < 2; ++ow) {
            int best = 0;
            for (int kh = 0; kh < 2; ++kh)
                for (int kw = 0; kw < 2; ++kw) best = std::max<int>(best, x.data<uint8_t>()[(oh + kh) * 4 + ow * 2 + kw]);
            EXPECT_EQ(y.data<uint8_t>()[oh * 2 + ow], best);
        }
}

TEST(OnnxPool, AveragePoolSameUpperExcludesPadding)
{
    const Tensor x = random_tensor({1, 2, 5, 6}, 19);
    ParamDict pd = pool_params(false, {3, 3}, {2, 2}, {}, {});
    pd.set_int(26, 1); // SAME_UPPER: H total (3-1)*2+3-5 = 2 -> 1/1; W total (3-1)*2+3-6 = 1 -> 0/1
    Win3 win;
    win.k[1] = 3, win.k[2] = 3, win.s[1] = 2, win.s[2] = 2, win.pb[1] = 1, win.pb[2] = 0;
    const int64_t o[3] = {1, 3, 3}, lo[3] = {0, 0, 0}, hi[3] = {1, 5, 6};
    expect_close(run("Pooling", pd, {}, {x})[0], ref_pool(x.reshaped({2, 1, 5, 6}), false, win, o, lo, hi).values,
                 {1, 2, 3, 3});
    // count_include_pad counts the SAME padding too (but nothing beyond it).
    pd.set_int(6, 1);
    const int64_t lo2[3] = {0, -1, 0}, hi2[3] = {1, 6, 7};
    expect_close(run("Pooling", pd, {}, {x})[0],
                 ref_pool(x.reshaped({2, 1, 5, 6}), false, win, o, lo2, hi2).values, {1, 2, 3, 3});
}

TEST(OnnxPool, OneAndThreeDimensionalPools)
{
    const Tensor x1 = random_tensor({2, 3, 9}, 20);
    Win3 w1;
    w1.k[2] = 3, w1.s[2] = 2, w1.pb[2] = 1, w1.pe[2] = 1;
    const int64_t o1[3] = {1, 1, 5}, lo1[3] = {0, 0, 0}, hi1[3] = {1, 1, 9};
    expect_close(run("Pooling", pool_params(false, {3}, {2}, {1, 1}, {}), {}, {x1})[0],
                 ref_pool(x1.reshaped({6, 1, 1, 9}), false, w1, o1, lo1, hi1).values, {2, 3, 5});

    const Tensor x3 = random_tensor({1, 2, 4, 5, 6}, 21);
    Win3 w3;
    w3.k[0] = 2, w3.k[1] = 2, w3.k[2] = 3;
    const int64_t o3[3] = {3, 4, 4}, lo3[3] = {0, 0, 0}, hi3[3] = {4, 5, 6};
    expect_close(run("Pooling", pool_params(true, {2, 2, 3}, {}, {}, {}), {}, {x3})[0],
                 ref_pool(x3.reshaped({2, 4, 5, 6}), true, w3, o3, lo3, hi3).values, {1, 2, 3, 4, 4});
}

// ---------------------------------------------------------------- MaxUnpool

TEST(OnnxPool, MaxUnpoolScattersIntoTheDefaultOrGivenShape)
{
    // X (1,2,2,2) with kernel 2 stride 2 -> default output (1,2,4,4).
    Tensor x({1, 2, 2, 2}, DType::F32), idx({1, 2, 2, 2}, DType::I64);
    const int64_t positions[8] = {0, 3, 9, 15, 16 + 5, 16 + 6, 16 + 8, 16 + 14};
    for (int i = 0; i < 8; ++i) x.data<float>()[i] = float(i + 1), idx.data<int64_t>()[i] = positions[i];
    const ParamDict pd = window_params({2, 2}, {2, 2}, {}, {}, 0);
    const Tensor y = run("MaxUnpool", pd, {}, {x, idx})[0];
    std::vector<double> ref(32, 0.0);
    for (int i = 0; i < 8; ++i) ref[static_cast<size_t>(positions[i])] = i + 1;
    expect_close(y, ref, {1, 2, 4, 4});

    // A given (1,2,5,5) output keeps every value's (h, w).
    Tensor shape({4}, DType::I64);
    const int64_t dims[4] = {1, 2, 5, 5};
    std::copy(dims, dims + 4, shape.data<int64_t>());
    ParamDict dyn = pd;
    dyn.set_int(20, 1);
    const Tensor y2 = run("MaxUnpool", dyn, {}, {x, idx, shape})[0];
    std::vector<double> ref2(50, 0.0);
    for (int i = 0; i < 8; ++i) {
        const int64_t plane = positions[i] / 16, h = positions[i] % 16 / 4, w = positions[i] % 4;
        ref2[static_cast<size_t>(plane * 25 + h * 5 + w)] = i + 1;
    }
    expect_close(y2, ref2, {1, 2, 5, 5});
}

// ---------------------------------------------------------------- errors

void expect_error(const std::function<void()>& fn, const std::string& fragment)
{
    try {
        fn();
        ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
}

TEST(ConvPoolErrors, BadParamsShapesAndIndicesAreReported)
{
    const Tensor x1 = random_tensor({2, 6}, 22);
    expect_error([&] { run("Convolution1D", ints({{0, 2}, {1, 0}, {6, 4}}), {Tensor::zeros({4})}, {x1}); },
                 "kernel_w (param 1) must be > 0");
    expect_error([&] { run("Convolution1D", ints({{0, 2}, {1, 3}, {6, 10}}), {Tensor::zeros({10})}, {x1}); },
                 "weight_data_size");
    expect_error([&] { run("Convolution3D", ints({{0, 2}, {1, 3}, {6, 54}, {4, -233}, {15, 1}}), {Tensor::zeros({54})}, {x1}); },
                 "pads must all be");
    expect_error([&] { run("Convolution1D", ints({{0, 2}, {1, 3}, {6, 12}}), {Tensor::zeros({12})}, {x1.reshaped({1, 2, 6})}); },
                 "expects a (channels, 1 spatial dims) input");
    expect_error([&] { run("Convolution1D", ints({{19, 1}}), {}, {x1, random_tensor({3, 2, 2, 2}, 1)}); },
                 "the weight input must have rank 3");
    expect_error([&] { run("Convolution1D", ints({{19, 1}}), {}, {x1, random_tensor({3, 2, 9}, 1)}); },
                 "does not fit the padded input");
    expect_error([&] { run("Deconvolution1D", ints({{28, 1}, {4, 4}, {15, 4}}), {}, {x1, random_tensor({2, 1, 2}, 1)}); },
                 "the output is empty");
    expect_error([&] { run("Deconvolution1D", ints({{28, 1}, {4, -233}, {20, 30}}), {}, {x1, random_tensor({2, 1, 2}, 1)}); },
                 "exceeds the full deconvolution output");

    const Tensor x = random_tensor({1, 1, 4, 4}, 23);
    expect_error([&] { run("Pooling", pool_params(true, {2, 2}, {}, {1, 1}, {}), {}, {x}); }, "pads (param 23) must have 4");
    expect_error([&] { run("Pooling", pool_params(true, {2, 2, 2}, {}, {}, {}), {}, {x}); }, "3 spatial dims");
    expect_error([&] { run("Pooling", pool_params(true, {5, 5}, {}, {}, {}), {}, {x}); }, "does not fit");
    Tensor xi({1, 1, 4, 4}, DType::I32);
    xi.fill_zero();
    expect_error([&] { run("Pooling", pool_params(false, {2, 2}, {}, {}, {}), {}, {xi}); }, "must be a float type");

    Tensor idx({1, 1, 2, 2}, DType::I64);
    for (int i = 0; i < 4; ++i) idx.data<int64_t>()[i] = i == 2 ? 16 : i;
    expect_error([&] { run("MaxUnpool", window_params({2, 2}, {2, 2}, {}, {}, 0), {}, {random_tensor({1, 1, 2, 2}, 1), idx}); },
                 "index 16 is outside");
}

} // namespace
