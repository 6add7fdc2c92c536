// Shared by tests/test_conv_ops.cpp (fp32 layers) and tests/test_int8_ops.cpp
// (int8 layers): random data, a ParamDict builder, running one ncnn layer
// through Net + Session, and the naive 2-D convolution loop that both files'
// references are written on (each adds its own arithmetic: double, or int8
// sums with ncnn's quantization).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kestrel/kestrel.h"
#include "layer_test_util.h"

namespace kestrel::conv_test {

inline Tensor random_tensor(const Shape& shape, uint32_t seed, float lo = -1.f, float hi = 1.f)
{
    return layer_test::random_f32(shape, seed, lo, hi);
}

inline std::vector<float> random_vector(int64_t n, uint32_t seed, float lo = -1.f, float hi = 1.f)
{
    const Tensor t = random_tensor({n}, seed, lo, hi);
    return std::vector<float>(t.data<float>(), t.data<float>() + n);
}

inline Tensor from_vector(const std::vector<float>& v, const Shape& shape)
{
    Tensor t(shape, DType::F32);
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
}

// Fluent ParamDict builder.
struct PD {
    ParamDict pd;
    PD& i(int id, int v)
    {
        pd.set_int(id, v);
        return *this;
    }
    PD& f(int id, float v)
    {
        pd.set_float(id, v);
        return *this;
    }
    PD& fs(int id, std::vector<float> v)
    {
        pd.set_floats(id, std::move(v));
        return *this;
    }
};

// Runs one layer on the given inputs through Net + Session.
inline Tensor run_layer(const std::string& type, const ParamDict& pd, const std::vector<Tensor>& weights,
                        const std::vector<Tensor>& inputs, int threads = 1)
{
    Net net;
    std::vector<std::string> names;
    for (size_t i = 0; i < inputs.size(); ++i) {
        names.push_back("x" + std::to_string(i));
        net.add_layer("Input", "in" + std::to_string(i), {}, {names.back()});
    }
    net.add_layer(type, "op", names, {"y"}, pd, weights);
    net.finish_graph();
    Options o;
    o.threads = threads;
    Session s(net, o);
    for (size_t i = 0; i < inputs.size(); ++i) s.set_input(names[i], inputs[i]);
    return s.get("y");
}

// The params (10) the tests give each fused activation type (9): LeakyReLU
// slope, Clip bounds, HardSwish alpha/beta.
inline std::vector<float> act_params_for(int type)
{
    switch (type) {
    case 2: return {0.125f};
    case 3: return {-0.3f, 0.4f};
    case 6: return {0.2f, 0.5f};
    }
    return {};
}

// Pads of ONNX SAME (mode -233 upper, -234 lower), from the spec:
// out = ceil(in/stride), total = max(0, (out-1)*stride + extent - in).
inline void same_pads(int mode, int64_t in, int64_t extent, int64_t stride, int64_t& before, int64_t& after)
{
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>(0, (out - 1) * stride + extent - in);
    before = mode == -233 ? total / 2 : total - total / 2;
    after = total - before;
}

// A 2-D convolution window: kernel, stride, dilation and pads (explicit, or
// all -233 / -234 for SAME).
struct ConvWindow {
    int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
    int64_t pt = 0, pb = 0, pl = 0, pr = 0;
};

// The naive grouped convolution loop over an input (C, H, W) with weights
// [outch][C/group][kh][kw]. For every output (oc, oy, ox) in row-major order:
// acc = start(oc); tap(acc, oc, input index, weight index) for every tap, the
// input index -1 where the tap lies in the padding; then finish(oc, acc).
// Returns the output shape (outch, OH, OW).
template <class Start, class Tap, class Finish>
Shape naive_conv(int64_t C, int64_t H, int64_t W, int64_t outch, int64_t group, const ConvWindow& w,
                 const Start& start, const Tap& tap, const Finish& finish)
{
    const int64_t ext_h = w.dh * (w.kh - 1) + 1, ext_w = w.dw * (w.kw - 1) + 1;
    int64_t pt = w.pt, pb = w.pb, pl = w.pl, pr = w.pr;
    if (w.pl < 0) {
        same_pads(static_cast<int>(w.pl), W, ext_w, w.sw, pl, pr);
        same_pads(static_cast<int>(w.pl), H, ext_h, w.sh, pt, pb);
    }
    const int64_t OH = (H + pt + pb - ext_h) / w.sh + 1, OW = (W + pl + pr - ext_w) / w.sw + 1;
    const int64_t inch_g = C / group, outch_g = outch / group;
    for (int64_t oc = 0; oc < outch; ++oc)
        for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OW; ++ox) {
                auto acc = start(oc);
                for (int64_t i = 0; i < inch_g; ++i) {
                    const int64_t ic = oc / outch_g * inch_g + i;
                    for (int64_t ky = 0; ky < w.kh; ++ky)
                        for (int64_t kx = 0; kx < w.kw; ++kx) {
                            const int64_t iy = oy * w.sh + ky * w.dh - pt, ix = ox * w.sw + kx * w.dw - pl;
                            const bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
                            tap(acc, oc, inside ? (ic * H + iy) * W + ix : -1,
                                ((oc * inch_g + i) * w.kh + ky) * w.kw + kx);
                        }
                }
                finish(oc, acc);
            }
    return {outch, OH, OW};
}

} // namespace kestrel::conv_test
