// Where (ONNX): 3 inputs (bool condition, X, Y of one dtype) -> condition ? X : Y,
// numpy broadcasting over all three, on the one broadcast engine; values are
// copied unchanged, so one kernel per element size serves every dtype.
#include "kernels/broadcast.h"
#include "kernels/elementwise_ops.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

namespace {

class WhereLayer final : public Op {
public:
    void infer(const std::vector<TensorDesc>& inputs, std::vector<TensorDesc>& outputs) const override
    {
        expect_input_count(inputs, 3, 3);
        expect_output_count(outputs, 1);
        check(inputs[0].dtype == DType::Bool, "condition must be bool, got ", dtype_name(inputs[0].dtype));
        check(inputs[1].dtype == inputs[2].dtype, "X and Y must have one dtype, got ", dtype_name(inputs[1].dtype),
              " and ", dtype_name(inputs[2].dtype));
        outputs[0] =
            TensorDesc(broadcast_numpy({inputs[0].shape, inputs[1].shape, inputs[2].shape}).out_shape, inputs[1].dtype);
    }

    void forward(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                 const ExecContext& ctx) const override
    {
        const Tensor& c = inputs.at(0);
        const Tensor& x = inputs.at(1);
        const Tensor& y = inputs.at(2);
        Tensor& out = outputs.at(0);
        check(c.dtype() == DType::Bool && x.dtype() == y.dtype() && out.dtype() == x.dtype(), "dtype mismatch");
        const BroadcastPlan plan = broadcast_numpy({c.shape(), x.shape(), y.shape()});
        check(out.shape() == plan.out_shape, "output shape ", shape_str(out.shape()), " != broadcast shape ", shape_str(plan.out_shape));
        // Select copies values unchanged, so one kernel per element size serves every dtype.
        auto select = [&](auto tag) {
            using T = typename decltype(tag)::type;
            broadcast_ternary(plan, c.data<bool>(), x.data<T>(), y.data<T>(), out.data<T>(), ew::Select(),
                              ParallelRunner(ctx));
        };
        nd::visit_element_size(dtype_size(x.dtype()), select);
    }
};

} // namespace

std::unique_ptr<Op> make_where() { return std::make_unique<WhereLayer>(); }

} // namespace kestrel
