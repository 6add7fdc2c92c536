// The row dot product kernels (kernels/row_dots.h), every one this CPU runs,
// float and half-float weights, against sums in double of the same weights;
// and InnerProduct with LoadOptions::fp16_weights against the float layer and
// that reference.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/half.h"
#include "kernels/row_dots.h"
#include "layer_test_util.h"

namespace kestrel {
namespace {

std::vector<float> uniform(int64_t n, uint32_t seed, float lo, float hi)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(rng);
    return v;
}

TEST(RowDots, EveryKernelMatchesDoubleSumsForFloatHalfAndBf16Weights)
{
    enum class Form { Float, Half, Bf16 };
    for (int64_t n : {0, 1, 7, 15, 16, 17, 63, 64, 65, 200, 1027}) {
        const int64_t rows = 5;
        const std::vector<float> wf = uniform(rows * n, 3 + static_cast<uint32_t>(n), -2.f, 2.f);
        std::vector<uint16_t> wh(static_cast<size_t>(rows * n)), wb(wh.size());
        for (size_t i = 0; i < wh.size(); ++i) wh[i] = float_to_half(wf[i]), wb[i] = float_to_bf16(wf[i]);
        const std::vector<float> x = uniform(n, 7 + static_cast<uint32_t>(n), -1.f, 1.f);
        for (const RowDotKernel* k : row_dot_kernels_available())
            for (Form form : {Form::Float, Form::Half, Form::Bf16}) {
                SCOPED_TRACE(::testing::Message() << k->isa << " n=" << n << " form " << int(form));
                std::vector<float> y(rows + 1, 12345.f);
                if (form == Form::Half)
                    k->halves(wh.data(), x.data(), n, rows, y.data());
                else if (form == Form::Bf16)
                    k->bf16s(wb.data(), x.data(), n, rows, y.data());
                else
                    k->floats(wf.data(), x.data(), n, rows, y.data());
                EXPECT_EQ(y[rows], 12345.f) << "wrote past the rows";
                for (int64_t o = 0; o < rows; ++o) {
                    double want = 0, scale = 0;
                    for (int64_t i = 0; i < n; ++i) {
                        const size_t at = static_cast<size_t>(o * n + i);
                        const double wi = form == Form::Half   ? double(half_to_float(wh[at]))
                                          : form == Form::Bf16 ? double(bf16_to_float(wb[at]))
                                                               : double(wf[at]);
                        want += wi * x[i];
                        scale += std::fabs(wi * x[i]);
                    }
                    EXPECT_NEAR(y[o], want, 1e-6 * (scale + 1)) << "row " << o;
                }
            }
    }
}

// A 2-row input (rows x 300) and a flat one, with bias and ReLU.
TEST(RowDots, InnerProductWithHalfWeightsMatchesItsReference)
{
    const int64_t in = 300, out = 37;
    const std::vector<float> w = uniform(in * out, 11, -0.5f, 0.5f), b = uniform(out, 12, -1.f, 1.f);
    ParamDict pd;
    pd.set_int(0, static_cast<int>(out));
    pd.set_int(1, 1);
    pd.set_int(2, static_cast<int>(in * out));
    pd.set_int(9, 1);
    const auto make = [&](Net& net, bool half) {
        LoadOptions lo;
        lo.fp16_weights = half;
        net.set_load_options(lo);
        net.add_layer("Input", "in", {}, {"x"});
        net.add_layer("InnerProduct", "fc", {"x"}, {"y"}, pd,
                      {layer_test::f32({in * out}, w), layer_test::f32({out}, b)});
        net.finish_graph();
    };
    Net plain, half;
    make(plain, false);
    make(half, true);
    for (const Shape& shape : {Shape{in}, Shape{2, in}}) {
        const int64_t rows = shape.size() == 2 ? shape[0] : 1;
        const std::vector<float> xv = uniform(rows * in, 13, -1.f, 1.f);
        const Tensor x = layer_test::f32(shape, xv);
        Session a(plain), c(half);
        a.set_input("x", x);
        c.set_input("x", x);
        const Tensor ya = a.get("y"), yc = c.get("y");
        ASSERT_EQ(ya.numel(), rows * out);
        ASSERT_EQ(yc.numel(), rows * out);
        double max_diff = 0, max_abs = 0;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t o = 0; o < out; ++o) {
                double want = b[o];
                for (int64_t i = 0; i < in; ++i) want += double(half_to_float(float_to_half(w[o * in + i]))) * xv[r * in + i];
                want = std::max(want, 0.0);
                const float got = yc.data<float>()[r * out + o];
                EXPECT_NEAR(got, want, 1e-4) << "row " << r << " output " << o;
                max_diff = std::max(max_diff, std::fabs(double(got) - ya.data<float>()[r * out + o]));
                max_abs = std::max(max_abs, std::fabs(double(ya.data<float>()[r * out + o])));
            }
        EXPECT_GT(max_diff, 0.0) << "the half weights changed nothing: not taken?";
        EXPECT_LT(max_diff, 2e-3 * max_abs) << "half weights moved the outputs by more than their rounding";
    }
}

} // namespace
} // namespace kestrel
