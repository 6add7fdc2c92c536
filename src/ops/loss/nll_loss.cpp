// NegativeLogLikelihoodLoss (ONNX): input 0 log-probabilities (N, C, d1..dk),
// float; input 1 target classes (N, d1..dk), integer; optional input 2 class
// weights (C), same dtype as input 0.
//   loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]
// (weight 1 without input 2), and 0 with weight 0 where target == ignore_index.
// Params: 0=reduction (0 none: the loss tensor, shape of the target; 1 sum;
// 2 mean, default: sum(loss) / sum of the weights used, a scalar),
// 1=has_ignore_index (0), 2=ignore_index. A target outside [0, C) other than
// ignore_index is an error. Sums are in double.
#include <vector>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum class Reduction { None = 0, Sum = 1, Mean = 2 };

class NllLoss : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        const int r = pd.get_int(0, 2);
        check(r >= 0 && r <= 2, "reduction (param 0) must be 0 (none), 1 (sum) or 2 (mean), got ", r);
        reduction_ = static_cast<Reduction>(r);
        has_ignore_index_ = pd.get_int(1, 0) != 0;
        ignore_index_ = pd.get_int(2, 0);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 3);
        expect_output_count(out, 1);
        const Shape& x = in[0].shape;
        check(dtype_is_float(in[0].dtype), "input 0 must be a float tensor, got ", dtype_name(in[0].dtype));
        check(x.size() >= 2, "input 0 must be (N, C, d1..dk), got shape ", shape_str(x));
        check(nd::is_integer_dtype(in[1].dtype), "target (input 1) must be an integer tensor, got ",
              dtype_name(in[1].dtype));
        check(in[1].shape == target_shape(x), "target (input 1) must have shape ", shape_str(target_shape(x)),
              " for input shape ", shape_str(x), ", got ", shape_str(in[1].shape));
        if (in.size() == 3) {
            check(in[2].dtype == in[0].dtype, "weight (input 2) must be ", dtype_name(in[0].dtype), ", got ",
                  dtype_name(in[2].dtype));
            check(in[2].shape == Shape{x[1]}, "weight (input 2) must have shape ", shape_str({x[1]}), ", got ",
                  shape_str(in[2].shape));
        }
        out[0] = TensorDesc(reduction_ == Reduction::None ? in[1].shape : Shape{}, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& x = in[0].shape();
        const int64_t classes = x[1], inner = nd::dims_product(x, 2, x.size());
        const std::vector<int64_t> target = nd::int_values(in[1], "target (input 1)");
        const std::vector<double> weight = class_weights(in, classes);
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T* logp = in[0].data<T>();
            T* y = out[0].data<T>();
            double loss_sum = 0, weight_sum = 0;
            for (size_t i = 0; i < target.size(); ++i) {
                const int64_t c = target[i];
                double loss = 0;
                if (!(has_ignore_index_ && c == ignore_index_)) {
                    check(c >= 0 && c < classes, "target value ", c, " at index ", i, " is outside [0, ", classes, ")");
                    // Sample i is (n, d) with n = i / inner, d = i % inner; its class c sits at (n, c, d).
                    const int64_t n = static_cast<int64_t>(i) / inner, d = static_cast<int64_t>(i) % inner;
                    const double w = weight.empty() ? 1.0 : weight[static_cast<size_t>(c)];
                    loss = -to_double(logp[(n * classes + c) * inner + d]) * w;
                    weight_sum += w;
                }
                if (reduction_ == Reduction::None) y[i] = convert_value<T>(loss);
                loss_sum += loss;
            }
            if (reduction_ == Reduction::Sum) y[0] = convert_value<T>(loss_sum);
            // 0/0 (every sample ignored) is NaN, as in the reference implementations.
            if (reduction_ == Reduction::Mean) y[0] = convert_value<T>(loss_sum / weight_sum);
        });
    }

private:
    // (N, C, d1..dk) -> (N, d1..dk)
    static Shape target_shape(const Shape& x)
    {
        Shape t = x;
        t.erase(t.begin() + 1);
        return t;
    }
    static std::vector<double> class_weights(const std::vector<Tensor>& in, int64_t classes)
    {
        std::vector<double> w;
        if (in.size() < 3) return w;
        w.resize(static_cast<size_t>(classes));
        visit_dtype(in[2].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            for (size_t c = 0; c < w.size(); ++c) w[c] = to_double(in[2].data<T>()[c]);
        });
        return w;
    }

    Reduction reduction_ = Reduction::Mean;
    bool has_ignore_index_ = false;
    int64_t ignore_index_ = 0;
};

} // namespace

std::unique_ptr<Op> make_nll_loss() { return std::make_unique<NllLoss>(); }

} // namespace kestrel
