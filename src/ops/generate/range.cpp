// Range (ONNX): inputs 0 start, 1 limit, 2 delta (one-element tensors of one
// numeric dtype). Output: max(ceil((limit - start) / delta), 0) elements
// start + i * delta, of that dtype. Param 20=dynamic (see common/tensor_util.cpp).
#include <cmath>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Range : public Op {
public:
    void load_param(const ParamDict& pd) override { dynamic_ = pd.get_int(20, 0) != 0; }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 3);
        expect_output_count(out, 1);
        for (size_t i = 0; i < 3; ++i) {
            check(shape_numel(in[i].shape) == 1, "input ", i, " must hold one value, got shape ", shape_str(in[i].shape));
            check(in[i].dtype == in[0].dtype, "inputs must share a dtype, got ", dtype_name(in[0].dtype), " and ",
                  dtype_name(in[i].dtype));
        }
        check(in[0].dtype != DType::Bool, "bool ranges are not supported");
        const bool known = in[0].value.defined() && in[1].value.defined() && in[2].value.defined();
        if (!known && dynamic_) {
            out[0] = TensorDesc(Shape{0}, in[0].dtype); // placeholder: forward() gives the real length
            return;
        }
        out[0] = TensorDesc({count(nd::known_value(in[0], "start (input 0)"), nd::known_value(in[1], "limit (input 1)"),
                                   nd::known_value(in[2], "delta (input 2)"))},
                            in[0].dtype);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 0); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const int64_t n = count(in[0], in[1], in[2]);
        if (out[0].shape() != Shape{n}) out[0] = Tensor({n}, in[0].dtype());
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                const T start = *in[0].data<T>(), delta = *in[2].data<T>();
                for (int64_t i = 0; i < n; ++i) out[0].data<T>()[i] = static_cast<T>(start + static_cast<T>(i) * delta);
            } else {
                const double start = to_double(*in[0].data<T>()), delta = to_double(*in[2].data<T>());
                for (int64_t i = 0; i < n; ++i)
                    out[0].data<T>()[i] = convert_value<T>(start + static_cast<double>(i) * delta);
            }
        });
    }

private:
    static int64_t count(const Tensor& start, const Tensor& limit, const Tensor& delta)
    {
        int64_t n = 0;
        visit_dtype(start.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
                const int64_t s = static_cast<int64_t>(*start.data<T>()), l = static_cast<int64_t>(*limit.data<T>()),
                              d = static_cast<int64_t>(*delta.data<T>());
                check(d != 0, "delta (input 2) is 0");
                const int64_t span = l - s;
                // ceil(span / d) with integer arithmetic
                n = span / d + ((span % d != 0 && ((span > 0) == (d > 0))) ? 1 : 0);
            } else {
                const double s = to_double(*start.data<T>()), l = to_double(*limit.data<T>()),
                             d = to_double(*delta.data<T>());
                check(d != 0 && std::isfinite(s) && std::isfinite(l) && std::isfinite(d),
                      "start, limit and delta must be finite and delta non-zero, got ", s, ", ", l, ", ", d);
                const double c = std::ceil((l - s) / d);
                check(c < 9.0e15, "range of ", c, " elements is too long");
                n = static_cast<int64_t>(c);
            }
        });
        return n < 0 ? 0 : n;
    }
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_range() { return std::make_unique<Range>(); }

} // namespace kestrel
