// Scalar activation functions shared by the standalone activation layers and
// the activations fused into Convolution/InnerProduct (ncnn's param 9/10).
#pragma once
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kestrel/error.h"

namespace kestrel {

struct Activation {
    // ncnn's fused activation_type values.
    enum Type { None = 0, ReLU = 1, LeakyReLU = 2, Clip = 3, Sigmoid = 4, Mish = 5, HardSwish = 6 };
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
        case None: case ReLU: case Sigmoid: case Mish: break;
        case LeakyReLU: need(1); act.a = params[0]; break;
        case Clip: case HardSwish: need(2); act.a = params[0]; act.b = params[1]; break;
        default: fail("activation_type (param 9) must be 0..6, got ", type);
        }
        return act;
    }

    float operator()(float x) const
    {
        switch (type) {
        case ReLU: return std::max(x, 0.f);
        case LeakyReLU: return x > 0.f ? x : x * a;
        case Clip: return std::min(std::max(x, a), b);
        case Sigmoid: {
            const float c = std::min(std::max(x, -88.3762626647949f), 88.3762626647949f);
            return 1.f / (1.f + std::exp(-c));
        }
        case Mish: return x * std::tanh(std::log1p(std::exp(x)));
        case HardSwish: {
            const float lower = -b / a, upper = (1.f - b) / a;
            if (x < lower) return 0.f;
            if (x > upper) return x;
            return x * (x * a + b);
        }
        default: return x;
        }
    }

    void apply(float* data, int64_t n) const
    {
        if (type == None) return;
        for (int64_t i = 0; i < n; ++i) data[i] = (*this)(data[i]);
    }
};

} // namespace kestrel
