// ncnn UnaryOp: y = f(x) element-wise, f chosen by 0=op_type (0..27, see
// ew::NcnnUnaryOps); runs in place. ROUND is round-half-to-even regardless of
// the thread's floating-point rounding mode.
#include <array>
#include <memory>

#include "kernels/broadcast.h"
#include "kernels/elementwise_ops.h"
#include "kestrel/op.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

using UnaryKernelF32 = void (*)(const BroadcastPlan&, const float*, float*, const ParallelRunner&);

struct MakeUnaryKernel {
    template <class F> static constexpr UnaryKernelF32 get()
    {
        return [](const BroadcastPlan& plan, const float* in, float* out, const ParallelRunner& run) {
            broadcast_unary(plan, in, out, F(), run);
        };
    }
};

constexpr auto kUnaryKernels = ew::make_table<ew::NcnnUnaryOps, MakeUnaryKernel>();

class UnaryOpLayer final : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        op_type_ = pd.get_int(0, 0);
        check(op_type_ >= 0 && op_type_ < ew::kNcnnUnaryOpCount, "op_type (param 0) ", op_type_,
              " out of range 0..", ew::kNcnnUnaryOpCount - 1);
    }

    void infer(const std::vector<TensorDesc>& inputs, std::vector<TensorDesc>& outputs) const override
    {
        expect_input_count(inputs, 1, 1);
        expect_output_count(outputs, 1);
        expect_f32(inputs[0]);
        TensorDesc out;
        out.shape = inputs[0].shape;
        out.dtype = DType::F32;
        outputs[0] = out;
    }

    void forward(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                 const ExecContext& ctx) const override
    {
        const Tensor& in = inputs.at(0);
        Tensor& out = outputs.at(0);
        check(out.shape() == in.shape(), "output shape ", shape_str(out.shape()), " != input ",
              shape_str(in.shape()));
        kUnaryKernels[static_cast<size_t>(op_type_)](elementwise_plan(in.shape()), in.data<float>(),
                                                     out.data<float>(), ParallelRunner(ctx));
    }

    bool supports_inplace() const override { return true; }

private:
    int op_type_ = 0;
};

} // namespace

std::unique_ptr<Op> make_unary_op() { return std::make_unique<UnaryOpLayer>(); }

} // namespace kestrel
