// UnaryOp: y = f(x) element-wise, in place. Two op tables:
//   ncnn's   0=op_type (0..27, ew::NcnnUnaryOps), float32; ROUND is
//            round-half-to-even regardless of the thread's rounding mode.
//   typed    21=1: 0=op from typed_ops.h's table (math, activations, IsNaN,
//            IsInf, Not, BitwiseNot, ...) over every dtype it accepts, with
//            1=alpha 2=beta (floats) 3, 4 (ints) where the op takes them
//            (ONNX's element-wise unaries).
#include "kernels/broadcast.h"
#include "kernels/elementwise_ops.h"
#include "ops/common/op_util.h"
#include "ops/elementwise/typed_ops.h"

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

constexpr auto kNcnnKernels = ew::make_table<ew::NcnnUnaryOps, MakeUnaryKernel>();

class UnaryOp final : public Op {
public:
    BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, bool) const override
    {
        return same_shape_elementwise(in, out);
    }
    void load_param(const ParamDict& pd) override
    {
        typed_ = pd.get_int(21, 0) == 1;
        op_ = pd.get_int(0, 0);
        const int count = typed_ ? typed_ops::unary_count() : ew::kNcnnUnaryOpCount;
        check(op_ >= 0 && op_ < count, "op_type (param 0) ", op_, " out of range 0..", count - 1);
        if (!typed_) return;
        const typed_ops::OpParams d = typed_ops::unary_defaults(op_);
        p_.alpha = pd.get_float(1, static_cast<float>(d.alpha));
        p_.beta = pd.get_float(2, static_cast<float>(d.beta));
        p_.flag_a = pd.get_int(3, d.flag_a);
        p_.flag_b = pd.get_int(4, d.flag_b);
        const std::string name = typed_ops::unary_name(op_);
        if (name == "Celu") check(p_.alpha != 0.0, "Celu alpha (param 1) must not be 0");
        if (name == "Gelu")
            check(p_.flag_a == 0 || p_.flag_a == 1, "Gelu approximate (param 3) must be 0 or 1, got ", p_.flag_a);
    }

    void infer(const std::vector<TensorDesc>& inputs, std::vector<TensorDesc>& outputs) const override
    {
        expect_input_count(inputs, 1, 1);
        expect_output_count(outputs, 1);
        if (!typed_) {
            expect_f32(inputs[0]);
            outputs[0] = TensorDesc(inputs[0].shape, DType::F32);
            return;
        }
        typed_ops::check_unary_dtype(op_, inputs[0].dtype);
        outputs[0] = TensorDesc(inputs[0].shape, typed_ops::unary_bool_out(op_) ? DType::Bool : inputs[0].dtype);
    }

    void forward(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, const ExecContext& ctx) const override
    {
        const ParallelRunner run(ctx);
        auto compute = [&](const std::vector<Tensor>& in, Tensor& out) {
            if (typed_) {
                typed_ops::run_unary(op_, in[0], out, p_, run);
                return;
            }
            if (out.shape() != in[0].shape()) // formatted only on failure
                fail("output shape ", shape_str(out.shape()), " != input ", shape_str(in[0].shape()));
            kNcnnKernels[static_cast<size_t>(op_)](elementwise_plan(in[0].shape()), in[0].data<float>(),
                                                   out.data<float>(), run);
        };
        if (typed_ && typed_ops::any_half(inputs))
            typed_ops::run_widened(inputs, outputs.at(0), compute);
        else
            compute(inputs, outputs.at(0));
    }

    bool supports_inplace() const override { return true; }

private:
    bool typed_ = false;
    int op_ = 0;
    typed_ops::OpParams p_;
};

} // namespace

std::unique_ptr<Op> make_unary_op() { return std::make_unique<UnaryOp>(); }

} // namespace kestrel
