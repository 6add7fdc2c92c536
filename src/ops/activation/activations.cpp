// One-input element-wise activation layers (ncnn params), all in place. Each
// is a small functor plugged into one PointwiseOp template: its map() runs a
// range, per value through operator() (Elementwise) or as a vectorized
// exp_activations.h kernel (ExpKernel).
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/exp_activations.h"
#include "ops/activation/activation.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

template <class F> struct Elementwise {
    void map(const float* x, float* y, int64_t n) const
    {
        // A copy: its params are then locals, which stores to y cannot change,
        // so the loop vectorizes (through a reference they are reloaded per value).
        const F f = static_cast<const F&>(*this);
        for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
    }
};

template <ExpActivation kind> struct ExpKernel {
    void load(const ParamDict&) {}
    void map(const float* x, float* y, int64_t n) const { exp_activation_kernel().map(kind, x, y, n); }
};

template <class F>
class PointwiseOp : public Op {
public:
    void load_param(const ParamDict& pd) override { f_.load(pd); }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        out[0] = in[0];
    }
    bool supports_inplace() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        ctx.parallel_for(in[0].numel(),
                         [&](int64_t begin, int64_t end) { f_.map(x + begin, y + begin, end - begin); });
    }

private:
    F f_;
};

struct ReluF : Elementwise<ReluF> {
    float slope = 0.f;
    void load(const ParamDict& pd) { slope = pd.get_float(0, 0.f); }
    // slope 0 writes 0 (not x * 0, which is NaN for -inf and -0 for negatives), as ncnn.
    float operator()(float x) const { return x < 0.f ? (slope == 0.f ? 0.f : x * slope) : x; }
};

struct ClipF : Elementwise<ClipF> {
    float lo = -FLT_MAX, hi = FLT_MAX;
    void load(const ParamDict& pd)
    {
        lo = pd.get_float(0, -FLT_MAX);
        hi = pd.get_float(1, FLT_MAX);
        check(lo <= hi, "min (param 0) ", lo, " is greater than max (param 1) ", hi);
    }
    float operator()(float x) const { return std::min(std::max(x, lo), hi); }
};

// ncnn clamps the input to +-88.376 (where expf stays finite), so very negative
// inputs give a tiny positive value rather than 0.
using SigmoidF = ExpKernel<ExpActivation::Sigmoid>;
using SwishF = ExpKernel<ExpActivation::Swish>;

struct HardSigmoidF : Elementwise<HardSigmoidF> {
    float alpha = 0.2f, beta = 0.5f;
    void load(const ParamDict& pd)
    {
        alpha = pd.get_float(0, 0.2f);
        beta = pd.get_float(1, 0.5f);
    }
    float operator()(float x) const { return std::min(std::max(x * alpha + beta, 0.f), 1.f); }
};

struct HardSwishF : Elementwise<HardSwishF> {
    Activation act;
    void load(const ParamDict& pd)
    {
        act = Activation::from_ncnn(Activation::HardSwish, {pd.get_float(0, 0.2f), pd.get_float(1, 0.5f)});
        check(act.a != 0.f, "alpha (param 0) must not be 0");
    }
    float operator()(float x) const { return act(x); }
};

// 0=1 (fast) is the tanh approximation.
struct GeluF {
    bool fast = false;
    void load(const ParamDict& pd) { fast = pd.get_int(0, 0) != 0; }
    void map(const float* x, float* y, int64_t n) const
    {
        if (fast) return exp_activation_kernel().map(ExpActivation::GeluTanh, x, y, n);
        for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * std::erfc(-x[i] * 0.70710678f);
    }
};

using MishF = ExpKernel<ExpActivation::Mish>;

struct TanhF : Elementwise<TanhF> {
    void load(const ParamDict&) {}
    float operator()(float x) const { return std::tanh(x); }
};

template <class F> std::unique_ptr<Op> make_pointwise() { return std::make_unique<PointwiseOp<F>>(); }

} // namespace

std::unique_ptr<Op> make_relu() { return make_pointwise<ReluF>(); }
std::unique_ptr<Op> make_clip() { return make_pointwise<ClipF>(); }
std::unique_ptr<Op> make_sigmoid() { return make_pointwise<SigmoidF>(); }
std::unique_ptr<Op> make_swish() { return make_pointwise<SwishF>(); }
std::unique_ptr<Op> make_hard_sigmoid() { return make_pointwise<HardSigmoidF>(); }
std::unique_ptr<Op> make_hard_swish() { return make_pointwise<HardSwishF>(); }
std::unique_ptr<Op> make_gelu() { return make_pointwise<GeluF>(); }
std::unique_ptr<Op> make_mish() { return make_pointwise<MishF>(); }
std::unique_ptr<Op> make_tanh() { return make_pointwise<TanhF>(); }

} // namespace kestrel
