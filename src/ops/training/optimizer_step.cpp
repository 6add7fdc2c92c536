// OptimizerStep: one update of n tensors by a first-order optimizer (ONNX's
// ai.onnx.preview.training Adagrad, Momentum and Adam). Inputs: R (learning
// rate, scalar), T (update count, int64 scalar), X1..Xn, G1..Gn (gradients),
// then the optimizer's state tensors per X: Adagrad H (accumulated squared
// gradients); Momentum V; Adam V, H. Outputs: X1..Xn updated, then the states
// updated, in input order. Every tensor of a group has X's shape and dtype
// (float32 or float64). Params:
//   0 = rule: 0 Adagrad, 1 Momentum, 2 Momentum with Nesterov's update, 3 Adam
//   1 = norm_coefficient (L2 term added to the gradient: G + c X)
//   2 = epsilon (Adagrad, Adam), 3 = decay_factor (Adagrad: R / (1 + T decay))
//   4 = alpha, 5 = beta (Momentum: V = alpha V + beta' G, beta' = 1 at T = 0;
//       Adam: the decay rates of V and H)
//   6 = norm_coefficient_post (Adam: X scaled by 1 - it after the step)
#include <cmath>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum class Rule { Adagrad, Momentum, Nesterov, Adam };

struct Hyper {
    double norm = 0, epsilon = 0, decay = 0, alpha = 0, beta = 0, norm_post = 0;
};

// One element's update, as doubles: x and the states in place; g the gradient.
// `rate` is the step's learning rate after the per-step adjustment.
void update(Rule rule, const Hyper& h, double rate, bool first, double& x, double g, double* state)
{
    g += h.norm * x;
    switch (rule) {
    case Rule::Adagrad:
        state[0] += g * g;
        x -= rate * g / (std::sqrt(state[0]) + h.epsilon);
        return;
    case Rule::Momentum:
    case Rule::Nesterov:
        state[0] = h.alpha * state[0] + (first ? 1.0 : h.beta) * g;
        x -= rate * (rule == Rule::Momentum ? state[0] : g + h.alpha * state[0]);
        return;
    case Rule::Adam:
        state[0] = h.alpha * state[0] + (1 - h.alpha) * g;
        state[1] = h.beta * state[1] + (1 - h.beta) * g * g;
        x = (1 - h.norm_post) * (x - rate * state[0] / (std::sqrt(state[1]) + h.epsilon));
        return;
    }
}

class OptimizerStep : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        const int rule = pd.get_int(0, 0);
        check(rule >= 0 && rule <= 3, "rule (param 0) must be 0 (Adagrad), 1 (Momentum), 2 (Nesterov) or 3 (Adam), got ", rule);
        rule_ = static_cast<Rule>(rule);
        h_.norm = pd.get_float(1, 0.f), h_.epsilon = pd.get_float(2, 0.f), h_.decay = pd.get_float(3, 0.f);
        h_.alpha = pd.get_float(4, 0.f), h_.beta = pd.get_float(5, 0.f), h_.norm_post = pd.get_float(6, 0.f);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        const int group = 2 + states();
        check(in.size() >= 2 + static_cast<size_t>(group) && (in.size() - 2) % group == 0, "takes R, T and ", group,
              " tensors per optimized tensor, got ", in.size(), " inputs");
        const size_t n = (in.size() - 2) / group;
        expect_output_count(out, static_cast<int>(n) * (1 + states()));
        check(in[0].shape.empty() || shape_numel(in[0].shape) == 1, "R must be a scalar, got ", shape_str(in[0].shape));
        check(in[1].dtype == DType::I64 && (in[1].shape.empty() || shape_numel(in[1].shape) == 1),
              "T must be an int64 scalar, got ", dtype_name(in[1].dtype), " ", shape_str(in[1].shape));
        for (size_t i = 0; i < n; ++i) {
            const TensorDesc& x = in[2 + i];
            check(x.dtype == DType::F32 || x.dtype == DType::F64, "X", i + 1, " must be float32 or float64");
            for (int k = 1; k < group; ++k) {
                const TensorDesc& t = in[2 + k * n + i];
                check(t.shape == x.shape && t.dtype == x.dtype, "input ", 2 + k * n + i, " must match X", i + 1, " (",
                      shape_str(x.shape), " ", dtype_name(x.dtype), "), got ", shape_str(t.shape), " ", dtype_name(t.dtype));
            }
            for (int k = 0; k <= states(); ++k) out[k * n + i] = TensorDesc(x.shape, x.dtype);
        }
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const size_t n = (in.size() - 2) / (2 + states());
        const double r = scalar_as_double(in[0]);
        const int64_t t = in[1].data<int64_t>()[0];
        double rate = r;
        if (rule_ == Rule::Adagrad) rate = r / (1 + static_cast<double>(t) * h_.decay);
        if (rule_ == Rule::Adam && t > 0)
            rate = r * std::sqrt(1 - std::pow(h_.beta, static_cast<double>(t))) / (1 - std::pow(h_.alpha, static_cast<double>(t)));
        for (size_t i = 0; i < n; ++i)
            visit_dtype(in[2 + i].dtype(), [&](auto tag) {
                using T = typename decltype(tag)::type;
                if constexpr (std::is_floating_point_v<T>) step<T>(in, out, n, i, rate, t == 0);
            });
    }

private:
    int states() const { return rule_ == Rule::Adam ? 2 : 1; }

    static double scalar_as_double(const Tensor& t)
    {
        return visit_dtype(t.dtype(), [&](auto tag) { return to_double(t.data<typename decltype(tag)::type>()[0]); });
    }

    template <class T>
    void step(const std::vector<Tensor>& in, std::vector<Tensor>& out, size_t n, size_t i, double rate, bool first) const
    {
        const int64_t count = in[2 + i].numel();
        for (int64_t e = 0; e < count; ++e) {
            double x = in[2 + i].data<T>()[e], state[2] = {0, 0};
            for (int k = 0; k < states(); ++k) state[k] = in[2 + (2 + k) * n + i].data<T>()[e];
            update(rule_, h_, rate, first, x, in[2 + n + i].data<T>()[e], state);
            out[i].data<T>()[e] = static_cast<T>(x);
            for (int k = 0; k < states(); ++k) out[(1 + k) * n + i].data<T>()[e] = static_cast<T>(state[k]);
        }
    }

    Rule rule_ = Rule::Adagrad;
    Hyper h_;
};

} // namespace

std::unique_ptr<Op> make_optimizer_step() { return std::make_unique<OptimizerStep>(); }

} // namespace kestrel
