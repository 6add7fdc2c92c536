// ncnn BinaryOp: A op B with broadcasting, or A op scalar (with_scalar=1); in place.
// Params: 0=op_type (0..18), 1=with_scalar, 2=b, and our extension
// 20=broadcast_rule (0 ncnn, 1 numpy, 2 unidirectional); see docs/binaryop.md.
// All work goes through the broadcast engine (kernels/broadcast.h) with the
// functor of ew::NcnnBinaryOps selected by op_type. Error messages carry no
// layer name: the runtime prefixes "file:line: BinaryOp 'name': ".
#include <array>
#include <memory>

#include "kernels/broadcast.h"
#include "kernels/elementwise_ops.h"
#include "kestrel/op.h"
#include "ops/common/op_util.h"

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
        check(op_type_ >= 0 && op_type_ < ew::kNcnnBinaryOpCount, "op_type (param 0) ", op_type_,
              " out of range 0..", ew::kNcnnBinaryOpCount - 1);
        with_scalar_ = pd.get_int(1, 0) != 0;
        b_ = pd.get_float(2, 0.f);
        const int rule = pd.get_int(kBroadcastRuleParam, 0);
        check(rule >= 0 && rule <= 2, "broadcast_rule (param 20) ", rule,
              " out of range 0..2 (0 ncnn, 1 numpy, 2 unidirectional)");
        rule_ = static_cast<BroadcastRule>(rule);
    }

    void infer(const std::vector<TensorDesc>& inputs, std::vector<TensorDesc>& outputs) const override
    {
        expect_output_count(outputs, 1);
        TensorDesc out;
        out.dtype = DType::F32;
        if (with_scalar_) {
            expect_input_count(inputs, 1, 1);
            expect_f32(inputs[0]);
            out.shape = inputs[0].shape;
        } else {
            expect_input_count(inputs, 2, 2);
            expect_f32(inputs[0], "input A");
            expect_f32(inputs[1], "input B");
            out.shape = broadcast_plan(rule_, inputs[0].shape, inputs[1].shape).out_shape;
        }
        outputs[0] = out;
    }

    void forward(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs,
                 const ExecContext& ctx) const override
    {
        const Tensor& a = inputs.at(0);
        Tensor& out = outputs.at(0);
        const BinaryKernelF32 kernel = kBinaryKernels[static_cast<size_t>(op_type_)];
        if (with_scalar_) {
            check(out.shape() == a.shape(), "output shape ", shape_str(out.shape()), " != input ",
                  shape_str(a.shape()));
            kernel(broadcast_numpy(a.shape(), Shape{}), a.data<float>(), &b_, out.data<float>(), ParallelRunner(ctx));
            return;
        }
        const Tensor& b = inputs.at(1);
        const BroadcastPlan p = broadcast_plan(rule_, a.shape(), b.shape());
        check(out.shape() == p.out_shape, "output shape ", shape_str(out.shape()), " != broadcast shape ",
              shape_str(p.out_shape));
        kernel(p, a.data<float>(), b.data<float>(), out.data<float>(), ParallelRunner(ctx));
    }

    // The runtime writes over input 0 only when it has the output's byte size,
    // i.e. A is not broadcast; the engine reads each A element before writing it
    // and copies B first if B shares A's storage.
    bool supports_inplace() const override { return true; }

private:
    int op_type_ = 0;
    bool with_scalar_ = false;
    float b_ = 0.f;
    BroadcastRule rule_ = BroadcastRule::Ncnn;
};

} // namespace

std::unique_ptr<Op> make_binary_op() { return std::make_unique<BinaryOpLayer>(); }

} // namespace kestrel
