// Scalar activation functions shared by the standalone activation layers and
// the activations fused into Convolution/InnerProduct (ncnn's param 9/10).
#pragma once
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/activations.h"
#include "kestrel/error.h"

namespace kestrel {

struct Activation {
    // ncnn's fused activation_type values, and Kestrel's 7 (Swish, x * sigmoid(x)),
    // which the optimizer fuses (ncnn has no such value: a file with 9=7 is Kestrel's).
    enum Type { None = 0, ReLU = 1, LeakyReLU = 2, Clip = 3, Sigmoid = 4, Mish = 5, HardSwish = 6, Swish = 7 };
    int type = None;
    float a = 0.f, b = 0.f;

    static Activation from_ncnn(int type, const std::vector<float>& params)
    {
        Activation act;
        act.type = type;
        auto need = [&](size_t n) {
            check(params.size() >= n, "activation type ", type, " needs ", n, " params (param 10), got ", params.size());
        };
        switch (type) {
        case None: case ReLU: case Sigmoid: case Mish: case Swish: break;
        case LeakyReLU: need(1); act.a = params[0]; break;
        case Clip: case HardSwish: need(2); act.a = params[0]; act.b = params[1]; break;
        default: fail("activation_type (param 9) must be 0..7, got ", type);
        }
        return act;
    }

    // ReLU and Clip as bounds {lo, hi} (std::min(std::max(x, lo), hi), the
    // same bits), which GEMM tiles apply before they store; nullptr for the others.
    const float* as_clamp(float (&bounds)[2]) const
    {
        if (type != ReLU && type != Clip) return nullptr;
        bounds[0] = type == ReLU ? 0.f : a;
        bounds[1] = type == ReLU ? INFINITY : b;
        return bounds;
    }

    float operator()(float x) const
    {
        return dispatch([&](auto t) { return eval<decltype(t)::value>(x); });
    }

    // Every type runs as an activations.h kernel (vectors of the CPU's width),
    // with the bits of eval().
    void apply(float* data, int64_t n) const
    {
        if (type == None) return;
        if (type == Sigmoid || type == Mish || type == Swish) return activation_kernel().map_exp(exp_kind(), data, data, n);
        // ReLU as Clip(0, inf): max(x, 0), then a min with infinity that changes nothing.
        const PiecewiseActivation f = type == LeakyReLU   ? PiecewiseActivation::LeakyReLU
                                      : type == HardSwish ? PiecewiseActivation::HardSwish
                                                          : PiecewiseActivation::Clip;
        activation_kernel().map_piecewise(f, type == ReLU ? 0.f : a, type == ReLU ? INFINITY : b, data, data, n);
    }

    // One value of type T (a compile-time type: loops over it vectorize).
    template <int T> float eval(float x) const
    {
        if constexpr (T == ReLU) return std::max(x, 0.f);
        if constexpr (T == LeakyReLU) return x > 0.f ? x : x * a;
        if constexpr (T == Clip) return std::min(std::max(x, a), b);
        if constexpr (T == Sigmoid) {
            const float c = std::min(std::max(x, -88.3762626647949f), 88.3762626647949f);
            return 1.f / (1.f + std::exp(-c));
        }
        if constexpr (T == Mish) return x * std::tanh(std::log1p(std::exp(x)));
        if constexpr (T == Swish) return x / (1.f + std::exp(-x));
        if constexpr (T == HardSwish) {
            const float lower = -b / a, upper = (1.f - b) / a;
            if (x < lower) return 0.f;
            if (x > upper) return x;
            return x * (x * a + b);
        }
        return x;
    }

private:
    // The activations.h kernel of an exp-based type: the standalone
    // Sigmoid, Mish and Swish layers map the same kernel, so fusing one of
    // them changes no bit.
    ExpActivation exp_kind() const
    {
        return type == Sigmoid ? ExpActivation::Sigmoid : type == Mish ? ExpActivation::Mish : ExpActivation::Swish;
    }

    // f(std::integral_constant<int, type>{}).
    template <class F> float dispatch(const F& f) const
    {
        switch (type) {
        case ReLU: return f(std::integral_constant<int, ReLU>{});
        case LeakyReLU: return f(std::integral_constant<int, LeakyReLU>{});
        case Clip: return f(std::integral_constant<int, Clip>{});
        case Sigmoid: return f(std::integral_constant<int, Sigmoid>{});
        case Mish: return f(std::integral_constant<int, Mish>{});
        case HardSwish: return f(std::integral_constant<int, HardSwish>{});
        case Swish: return f(std::integral_constant<int, Swish>{});
        default: return f(std::integral_constant<int, None>{});
        }
    }
};

} // namespace kestrel
