// One-input element-wise activation layers (ncnn params), all in place. Each
// is a small functor plugged into one PointwiseOp template: its map() runs a
// range, per value through operator() (Elementwise) or as a vectorized
// activations.h kernel (ExpKernel, ClampF, HardSwishF).
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "kernels/activations.h"
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
    void map(const float* x, float* y, int64_t n) const { activation_kernel().map_exp(kind, x, y, n); }
};

template <class F>
class PointwiseOp : public Op {
public:
    BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, bool) const override
    {
        return same_shape_elementwise(in, out);
    }
    void load_param(const ParamDict& pd) override { f_.load(pd); }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        infer_float_map(in, out);
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

// min(max(x, lo), hi) by the activations.h kernel.
struct ClampF {
    float lo = -FLT_MAX, hi = FLT_MAX;
    void map(const float* x, float* y, int64_t n) const
    {
        activation_kernel().map_piecewise(PiecewiseActivation::Clip, lo, hi, x, y, n);
    }
};

struct ReluF : Elementwise<ReluF> {
    float slope = 0.f;
    void load(const ParamDict& pd) { slope = pd.get_float(0, 0.f); }
    // slope 0 writes 0 (not x * 0, which is NaN for -inf and -0 for negatives), as ncnn:
    // max(x, 0), the kernel's clamp to [0, inf].
    float operator()(float x) const { return x < 0.f ? x * slope : x; }
    void map(const float* x, float* y, int64_t n) const
    {
        if (slope == 0.f) return ClampF{0.f, INFINITY}.map(x, y, n);
        Elementwise<ReluF>::map(x, y, n);
    }
};

struct ClipF : ClampF {
    void load(const ParamDict& pd)
    {
        lo = pd.get_float(0, -FLT_MAX);
        hi = pd.get_float(1, FLT_MAX);
        check(lo <= hi, "min (param 0) ", lo, " is greater than max (param 1) ", hi);
    }
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

struct HardSwishF {
    float alpha = 0.2f, beta = 0.5f;
    void load(const ParamDict& pd)
    {
        alpha = pd.get_float(0, 0.2f);
        beta = pd.get_float(1, 0.5f);
        check(alpha != 0.f, "alpha (param 0) must not be 0");
    }
    void map(const float* x, float* y, int64_t n) const
    {
        activation_kernel().map_piecewise(PiecewiseActivation::HardSwish, alpha, beta, x, y, n);
    }
};

// 0=1 (fast) is the tanh approximation.
struct GeluF {
    bool fast = false;
    void load(const ParamDict& pd) { fast = pd.get_int(0, 0) != 0; }
    void map(const float* x, float* y, int64_t n) const
    {
        if (fast) return activation_kernel().map_exp(ExpActivation::GeluTanh, x, y, n);
        for (int64_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * std::erfc(-x[i] * 0.70710678f);
    }
};

using MishF = ExpKernel<ExpActivation::Mish>;

struct TanhF : Elementwise<TanhF> {
    void load(const ParamDict&) {}
    float operator()(float x) const { return std::tanh(x); }
};

// 0=threshold (0): 1 above it, else 0.
struct ThresholdF : Elementwise<ThresholdF> {
    float threshold = 0.f;
    void load(const ParamDict& pd) { threshold = pd.get_float(0, 0.f); }
    float operator()(float x) const { return x > threshold ? 1.f : 0.f; }
};

// f(shift + scale * x) with ncnn's 1=scale (1) and 2=shift (0), in float as ncnn:
//   Exp    0=base (-1: e): base^t
//   Log    0=base (-1: e): ln(t) / ln(base)
//   Power  0=power (1):    t^power
enum class AffineThen { Exp, Log, Power };
template <AffineThen kind> struct AffineThenF : Elementwise<AffineThenF<kind>> {
    float a = -1.f, scale = 1.f, shift = 0.f; // a: the base, or the power
    float inv_log_base = 1.f;
    void load(const ParamDict& pd)
    {
        a = pd.get_float(0, kind == AffineThen::Power ? 1.f : -1.f);
        scale = pd.get_float(1, 1.f);
        shift = pd.get_float(2, 0.f);
        if (kind != AffineThen::Power && a != -1.f)
            check(a > 0.f && a != 1.f, "base (param 0) must be -1 (e) or positive and not 1, got ", a);
        if (kind == AffineThen::Log && a != -1.f) inv_log_base = 1.f / std::log(a);
    }
    float operator()(float x) const
    {
        const float t = shift + x * scale;
        if (kind == AffineThen::Exp) return a == -1.f ? std::exp(t) : std::pow(a, t);
        if (kind == AffineThen::Log) return a == -1.f ? std::log(t) : std::log(t) * inv_log_base;
        return std::pow(t, a);
    }
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
std::unique_ptr<Op> make_threshold() { return make_pointwise<ThresholdF>(); }
std::unique_ptr<Op> make_exp() { return make_pointwise<AffineThenF<AffineThen::Exp>>(); }
std::unique_ptr<Op> make_log() { return make_pointwise<AffineThenF<AffineThen::Log>>(); }
std::unique_ptr<Op> make_power() { return make_pointwise<AffineThenF<AffineThen::Power>>(); }

} // namespace kestrel
