// Options::precision BF16 on the layers that take it: Convolution (one group,
// 16+ channels, 128+ products a sum, every stride/dilation/padding form the
// bfloat16 path reads; smaller layers keep fp32's bits),
// InnerProduct (row dot products and the GEMM), Gemm with constant B, and
// MultiHeadAttention's projections, each against sums in double of the same
// layer's formula, within the error bfloat16 inputs bring (1e-2 of the
// largest output; measured 1e-3 to 4e-3). Where the CPU has bfloat16 dot
// products the result must also differ from the fp32 session's (else bf16
// would not have run); elsewhere BF16 runs fp32 and gives its bits.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/bf16_gemm.h"
#include "kestrel/kestrel.h"
#include "layer_test_util.h"
#include "reference_util.h"

namespace kestrel {
namespace {

std::vector<float> random_values(int64_t n, uint32_t seed, float scale = 1.f)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-scale, scale);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(rng);
    return v;
}

Tensor tensor_of(const Shape& shape, const std::vector<float>& v)
{
    Tensor t(shape, DType::F32);
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
}

// The layer alone, run on x in an fp32 and a BF16 session.
struct Runs {
    Tensor fp32, bf16;
};
Runs run_both(const std::string& type, const ParamDict& pd, const std::vector<Tensor>& weights, const Tensor& x)
{
    Net net;
    net.add_layer("Input", "in", {}, {"in"});
    net.add_layer(type, "op", {"in"}, {"out"}, pd, weights);
    net.finish_graph();
    Runs r;
    for (Options::Precision p : {Options::Precision::F32, Options::Precision::BF16}) {
        Options o;
        o.precision = p;
        Session s(net, o);
        s.set_input("in", x);
        (p == Options::Precision::F32 ? r.fp32 : r.bf16) = s.run({"out"})[0];
    }
    return r;
}

// in_bf16: whether the layer takes the bfloat16 path (else BF16 must give fp32's bits).
void expect_bf16_close(const Runs& r, const std::vector<double>& want, const Shape& shape, bool in_bf16 = true)
{
    ASSERT_EQ(r.bf16.shape(), shape);
    Tensor ref(shape, DType::F64);
    std::copy(want.begin(), want.end(), ref.data<double>());
    testing::expect_close_to_reference(r.fp32, ref, 1e-5);
    testing::expect_close_to_reference(r.bf16, ref, 1e-2);
    if (!in_bf16 || !bf16_gemm_has_dot_instructions())
        EXPECT_TRUE(testing::bit_identical(r.fp32, r.bf16)) << "a layer BF16 leaves in fp32 changed";
    else
        EXPECT_FALSE(testing::bit_identical(r.fp32, r.bf16)) << "BF16 gave the fp32 bits";
}

struct ConvCase {
    int64_t inch, outch, h, w, k, stride, dilation, pad;
    bool in_bf16 = true;
};

TEST(Bf16Layers, ConvolutionMatchesDoubleSums)
{
    const ConvCase cases[] = {
        {16, 32, 12, 11, 3, 1, 1, 1},        {40, 24, 15, 15, 3, 2, 1, 1},  {160, 48, 9, 10, 1, 1, 1, 0},
        {24, 17, 13, 13, 3, 1, 2, 2},        {128, 64, 14, 14, 1, 2, 1, 0}, {20, 33, 16, 16, 5, 2, 1, 2},
        {64, 64, 14, 14, 1, 1, 1, 0, false}, // 64 products a sum: fp32
        {8, 64, 14, 14, 3, 1, 1, 1, false},  // 8 input channels: fp32
    };
    uint32_t seed = 1;
    for (const ConvCase& c : cases) {
        SCOPED_TRACE(::testing::Message() << c.inch << "->" << c.outch << " k" << c.k << " s" << c.stride << " d"
                                          << c.dilation << " p" << c.pad);
        const auto w = random_values(c.outch * c.inch * c.k * c.k, seed++, 0.3f), b = random_values(c.outch, seed++);
        const auto x = random_values(c.inch * c.h * c.w, seed++);
        ParamDict pd = layer_test::P({{0, int(c.outch)}, {1, int(c.k)}, {2, int(c.dilation)}, {3, int(c.stride)},
                                   {4, int(c.pad)}, {5, 1}, {6, int(w.size())}, {9, 1}}); // 9=1: ReLU
        const Runs r = run_both("Convolution", pd, {tensor_of({int64_t(w.size())}, w), tensor_of({c.outch}, b)},
                                tensor_of({c.inch, c.h, c.w}, x));
        const int64_t oh = (c.h + 2 * c.pad - c.dilation * (c.k - 1) - 1) / c.stride + 1;
        const int64_t ow = (c.w + 2 * c.pad - c.dilation * (c.k - 1) - 1) / c.stride + 1;
        std::vector<double> want(static_cast<size_t>(c.outch * oh * ow));
        for (int64_t o = 0; o < c.outch; ++o)
            for (int64_t y = 0; y < oh; ++y)
                for (int64_t xx = 0; xx < ow; ++xx) {
                    double s = b[o];
                    for (int64_t i = 0; i < c.inch; ++i)
                        for (int64_t ky = 0; ky < c.k; ++ky)
                            for (int64_t kx = 0; kx < c.k; ++kx) {
                                const int64_t iy = y * c.stride + ky * c.dilation - c.pad;
                                const int64_t ix = xx * c.stride + kx * c.dilation - c.pad;
                                if (iy >= 0 && iy < c.h && ix >= 0 && ix < c.w)
                                    s += double(x[(i * c.h + iy) * c.w + ix]) * w[((o * c.inch + i) * c.k + ky) * c.k + kx];
                            }
                    want[(o * oh + y) * ow + xx] = std::max(s, 0.0);
                }
        expect_bf16_close(r, want, {c.outch, oh, ow}, c.in_bf16);
    }
}

// x (rows x in) W^T + b, W [out][in].
std::vector<double> linear(const std::vector<float>& x, int64_t rows, int64_t in, const std::vector<float>& w,
                           const std::vector<float>& b, int64_t out)
{
    std::vector<double> y(static_cast<size_t>(rows * out));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t o = 0; o < out; ++o) {
            double s = b[o];
            for (int64_t i = 0; i < in; ++i) s += double(x[r * in + i]) * w[o * in + i];
            y[r * out + o] = s;
        }
    return y;
}

TEST(Bf16Layers, InnerProductRowDotsAndGemmMatchDoubleSums)
{
    const int64_t in = 200, out = 70;
    const auto w = random_values(out * in, 11, 0.2f), b = random_values(out, 12);
    const ParamDict pd = layer_test::P({{0, int(out)}, {1, 1}, {2, int(w.size())}});
    for (int64_t rows : {1, 3, 40}) { // one row, a few (row dot products), a GEMM's worth
        SCOPED_TRACE(::testing::Message() << rows << " rows");
        const auto x = random_values(rows * in, 13 + uint32_t(rows));
        const Runs r = run_both("InnerProduct", pd, {tensor_of({out * in}, w), tensor_of({out}, b)},
                                rows == 1 ? tensor_of({in}, x) : tensor_of({rows, in}, x));
        expect_bf16_close(r, linear(x, rows, in, w, b, out), rows == 1 ? Shape{out} : Shape{rows, out});
    }
}

TEST(Bf16Layers, GemmWithConstantBMatchesDoubleSums)
{
    // ViT's linear form: 3=1 transB, 5=1 constant B, 6=1 constant C per column (10=4); alpha 0.5, beta 2.
    const int64_t seq = 37, K = 96, N = 50;
    ParamDict pd = layer_test::P({{3, 1}, {5, 1}, {6, 1}, {8, int(N)}, {9, int(K)}, {10, 4}});
    pd.set_float(0, 0.5f);
    pd.set_float(1, 2.f);
    const auto w = random_values(N * K, 21, 0.2f), c = random_values(N, 22), x = random_values(seq * K, 23);
    const Runs r = run_both("Gemm", pd, {tensor_of({N, K}, w), tensor_of({1, N}, c)}, tensor_of({seq, K}, x));
    std::vector<float> twice_c(c.size());
    for (size_t i = 0; i < c.size(); ++i) twice_c[i] = 2.f * c[i];
    std::vector<double> want = linear(x, seq, K, w, twice_c, N);
    for (double& v : want) v *= 0.5;
    expect_bf16_close(r, want, {seq, N});
}

TEST(Bf16Layers, MultiHeadAttentionProjectionsMatchDoubleSums)
{
    const int64_t seq = 20, E = 64, H = 4, D = E / H;
    std::vector<std::vector<float>> wb;
    for (uint32_t i = 0; i < 4; ++i) {
        wb.push_back(random_values(E * E, 31 + i, 0.15f));
        wb.push_back(random_values(E, 41 + i, 0.1f));
    }
    std::vector<Tensor> weights;
    for (size_t i = 0; i < wb.size(); ++i)
        weights.push_back(i % 2 == 0 ? tensor_of({E, E}, wb[i]) : tensor_of({E}, wb[i]));
    const auto x = random_values(seq * E, 51);
    const Runs r = run_both("MultiHeadAttention", layer_test::P({{0, int(E)}, {1, int(H)}, {2, int(E * E)}}), weights,
                            tensor_of({seq, E}, x));
    // Self-attention: softmax(Q K^T / sqrt(D)) V per head, then the out projection.
    const std::vector<double> q = linear(x, seq, E, wb[0], wb[1], E), k = linear(x, seq, E, wb[2], wb[3], E),
                              v = linear(x, seq, E, wb[4], wb[5], E);
    std::vector<float> heads(static_cast<size_t>(seq * E));
    for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < seq; ++i) {
            std::vector<double> s(static_cast<size_t>(seq));
            double top = -INFINITY, total = 0;
            for (int64_t j = 0; j < seq; ++j) {
                double dot = 0;
                for (int64_t d = 0; d < D; ++d) dot += q[i * E + h * D + d] * k[j * E + h * D + d];
                s[j] = dot / std::sqrt(double(D));
                top = std::max(top, s[j]);
            }
            for (double& e : s) total += (e = std::exp(e - top));
            for (int64_t d = 0; d < D; ++d) {
                double o = 0;
                for (int64_t j = 0; j < seq; ++j) o += s[j] / total * v[j * E + h * D + d];
                heads[i * E + h * D + d] = static_cast<float>(o);
            }
        }
    expect_bf16_close(r, linear(heads, seq, E, wb[6], wb[7], E), {seq, E});
}

} // namespace
} // namespace kestrel
