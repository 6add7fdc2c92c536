// ncnn BinaryOp: A op B with broadcasting, or A op scalar (with_scalar=1, in place).
// Params: 0=op_type (0..18), 1=with_scalar, 2=b, and our extension
// 20=broadcast_rule (0 ncnn, 1 numpy, 2 unidirectional); see docs/binaryop.md.
// All work goes through the broadcast engine (kernels/broadcast.h) with the
// functor of ew::NcnnBinaryOps selected by op_type.
#include <array>
#include <memory>

#include "kernels/broadcast.h"
#include "kernels/elementwise_ops.h"
#include "kestrel/op.h"
#include "ops/op_util.h"

#if __has_include("ops/builtin_ops.h")
#include "ops/builtin_ops.h"
#endif

namespace kestrel {

namespace {

using BinaryKernelF32 = void (*)(const BroadcastPlan&, const float*, const float*, float*, const ParallelRunner&);

struct MakeBinaryKernel {
    template <class F> static constexpr BinaryKernelF32 get()
    {
        return [](const BroadcastPlan& plan, const float* a, const float* b, float* out, const ParallelRunner& run) {
            broadcast_binary(plan, a, b, out, F(), run);
        };
    }
};

constexpr auto kBinaryKernels = ew::make_table<ew::NcnnBinaryOps, MakeBinaryKernel>();

constexpr int kBroadcastRuleParam = 20;

class BinaryOpLayer final : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        op_type_ = pd.get_int(0, 0);
        check(op_type_ >= 0 && op_type_ < ew::kNcnnBinaryOpCount, where(), ": op_type (param 0) ", op_type_,
              " out of range 0..", ew::kNcnnBinaryOpCount - 1);
        with_scalar_ = pd.get_int(1, 0) != 0;
        b_ = pd.get_float(2, 0.f);
        const int rule = pd.get_int(kBroadcastRuleParam, 0);
        check(rule >= 0 && rule <= 2, where(), ": broadcast_rule (param 20) ", rule,
              " out of range 0..2 (0 ncnn, 1 numpy, 2 unidirectional)");
        rule_ = static_cast<BroadcastRule>(rule);
    }

    void infer(const std::vector<TensorDesc>& inputs, std::vector<TensorDesc>& outputs) const override
    {
        try {
            expect_output_count(outputs, 1);
            if (with_scalar_) {
                expect_input_count(inputs, 1, 1);
                expect_f32(inputs[0]);
                outputs[0] = TensorDesc{inputs[0].shape, DType::F32};
                return;
            }
            expect_input_count(inputs, 2, 2);
            expect_f32(inputs[0], "input A");
            expect_f32(inputs[1], "input B");
            outputs[0] = TensorDesc{plan(inputs[0].shape, inputs[1].shape).out_shape, DType::F32};
        } catch (const TooLargeError&) {
            throw;
        } catch (const Error& e) {
            fail(where(), ": ", e.what());
        }
    }

    void forward(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                 const ExecContext& ctx) const override
    {
        const Tensor& a = inputs.at(0);
        Tensor& out = outputs.at(0);
        const BinaryKernelF32 kernel = kBinaryKernels[static_cast<size_t>(op_type_)];
        if (with_scalar_) {
            check(out.shape() == a.shape(), where(), ": output shape ", shape_str(out.shape()), " != input ",
                  shape_str(a.shape()));
            const BroadcastPlan p = broadcast_numpy(a.shape(), Shape{});
            kernel(p, a.data<float>(), &b_, out.data<float>(), ParallelRunner(ctx));
            return;
        }
        const Tensor& b = inputs.at(1);
        BroadcastPlan p;
        try {
            p = plan(a.shape(), b.shape());
        } catch (const Error& e) {
            fail(where(), ": ", e.what());
        }
        check(out.shape() == p.out_shape, where(), ": output shape ", shape_str(out.shape()), " != broadcast shape ",
              shape_str(p.out_shape));
        kernel(p, a.data<float>(), b.data<float>(), out.data<float>(), ParallelRunner(ctx));
    }

    bool supports_inplace() const override { return with_scalar_; }

private:
    BroadcastPlan plan(const Shape& a, const Shape& b) const { return broadcast_plan(rule_, a, b); }

    int op_type_ = 0;
    bool with_scalar_ = false;
    float b_ = 0.f;
    BroadcastRule rule_ = BroadcastRule::Ncnn;
};

} // namespace

std::unique_ptr<Op> make_binary_op() { return std::make_unique<BinaryOpLayer>(); }

} // namespace kestrel
