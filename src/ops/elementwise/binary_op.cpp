// BinaryOp: A op B with broadcasting, or A op scalar; in place. Two op tables:
//   ncnn's      0=op_type (0..18, ew::NcnnBinaryOps), 1=with_scalar, 2=b; float32.
//   typed       21=1: 0=op from typed_ops.h's table (arithmetic, comparisons,
//               logic, bitwise, Mod, BitShift, PRelu) over every dtype it
//               accepts (ONNX's element-wise binaries).
// 20=broadcast_rule (0 ncnn, 1 numpy, 2 unidirectional; default 0 for ncnn's
// table, 1 for the typed one); see docs/binaryop.md. All work goes through the
// one broadcast engine (kernels/broadcast.h). Same-shape operands take
// channel blocks elementwise, and a per-channel operand (an SE block's scales)
// meets a blocked one as a [C/B][1][B] operand against [C/B][H*W][B]. Error
// messages carry no layer name: the runtime prefixes "file:line: BinaryOp 'name': ".
#include "kernels/broadcast.h"
#include "kernels/elementwise_ops.h"
#include "ops/common/op_util.h"
#include "ops/elementwise/typed_ops.h"

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

constexpr auto kNcnnKernels = ew::make_table<ew::NcnnBinaryOps, MakeBinaryKernel>();

class BinaryOp final : public Op {
public:
    BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, bool) const override
    {
        const BlockedLayouts same = same_shape_elementwise(in, out);
        const int full = same.elementwise || with_scalar_ ? -1 : per_channel_pair(in, out[0]);
        if (full < 0) return same;
        BlockedLayouts layouts{{-1, -1}, {0}};
        layouts.inputs[static_cast<size_t>(full)] = 0;
        return layouts;
    }

    // The per-channel form: which operand is blocked, and the other padded to whole blocks.
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                                     PrepareContext& ctx) const override
    {
        if (with_scalar_ || out[0].layout != Layout::ChannelBlocks) return nullptr;
        auto st = std::make_unique<ChannelState>();
        st->full = in[0].layout == Layout::ChannelBlocks ? 0 : 1;
        const Shape& s = out[0].shape;
        st->channels = s[s.size() - 3];
        st->pixels = s[s.size() - 2] * s[s.size() - 1];
        const int64_t block = channel_block();
        st->padded = ctx.request_scratch((st->channels + block - 1) / block * block * 4);
        return st;
    }
    void load_param(const ParamDict& pd) override
    {
        typed_ = pd.get_int(21, 0) == 1;
        op_ = pd.get_int(0, 0);
        const int count = typed_ ? typed_ops::binary_count() : ew::kNcnnBinaryOpCount;
        check(op_ >= 0 && op_ < count, "op_type (param 0) ", op_, " out of range 0..", count - 1);
        with_scalar_ = !typed_ && pd.get_int(1, 0) != 0;
        b_ = pd.get_float(2, 0.f);
        const int rule = pd.get_int(20, typed_ ? 1 : 0);
        check(rule >= 0 && rule <= 2, "broadcast_rule (param 20) ", rule,
              " out of range 0..2 (0 ncnn, 1 numpy, 2 unidirectional)");
        rule_ = static_cast<BroadcastRule>(rule);
    }

    void infer(const std::vector<TensorDesc>& inputs, std::vector<TensorDesc>& outputs) const override
    {
        expect_output_count(outputs, 1);
        if (with_scalar_) {
            expect_input_count(inputs, 1, 1);
            expect_f32(inputs[0]);
            outputs[0] = TensorDesc(inputs[0].shape, DType::F32);
            return;
        }
        expect_input_count(inputs, 2, 2);
        const Shape out = broadcast_plan(rule_, inputs[0].shape, inputs[1].shape).out_shape;
        if (!typed_) {
            expect_f32(inputs[0], "input A");
            expect_f32(inputs[1], "input B");
            outputs[0] = TensorDesc(out, DType::F32);
            return;
        }
        typed_ops::check_binary_dtypes(op_, inputs[0].dtype, inputs[1].dtype);
        outputs[0] = TensorDesc(out, typed_ops::binary_bool_out(op_) ? DType::Bool : inputs[0].dtype);
    }

    void forward(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs, const ExecContext& ctx) const override
    {
        const Tensor& a = inputs.at(0);
        Tensor& out = outputs.at(0);
        const ParallelRunner run(ctx);
        if (with_scalar_) {
            // (fail, not check: the message's shapes are formatted only on failure, not every run)
            if (out.shape() != a.shape()) fail("output shape ", shape_str(out.shape()), " != input ", shape_str(a.shape()));
            kNcnnKernels[static_cast<size_t>(op_)](broadcast_numpy(a.shape(), Shape{}), a.data<float>(), &b_,
                                                   out.data<float>(), run);
            return;
        }
        check(inputs.size() == 2, "expects 2 inputs, got ", inputs.size());
        if (ctx.state()) {
            forward_channels(inputs, out, ctx.state_as<ChannelState>(), ctx);
            return;
        }
        compute(broadcast_plan(rule_, inputs[0].shape(), inputs[1].shape()), inputs, out, run);
    }

    // The runtime writes over input 0 only when it has the output's byte size,
    // i.e. A is not broadcast; the engine reads each A element before writing it
    // and copies B first if B shares A's storage.
    bool supports_inplace() const override { return true; }

private:
    struct ChannelState : OpState {
        int full = 0;          // the operand in channel blocks (the other has one value per channel)
        int64_t channels = 0, pixels = 0;
        int padded = -1;       // scratch: the per-channel operand over whole blocks
    };

    // Which operand is a whole [..., C, H, W] activation that the other, one
    // value per channel, is broadcast along (strides {H*W, 1} and {1, 0} over
    // the merged [C, H*W]); -1 for any other pairing.
    int per_channel_pair(const std::vector<TensorDesc>& in, const TensorDesc& out) const
    {
        if (in.size() != 2 || out.shape.size() < 3 || in[0].dtype != DType::F32 || in[1].dtype != DType::F32) return -1;
        const Shape& s = out.shape;
        const int64_t c = s[s.size() - 3], hw = s[s.size() - 2] * s[s.size() - 1];
        if (shape_numel(s) != c * hw || c < 2 || hw < 2) return -1;
        const BroadcastPlan p = broadcast_plan(rule_, in[0].shape, in[1].shape);
        if (p.dims != std::vector<int64_t>{c, hw}) return -1;
        for (int full : {0, 1})
            if (in[full].shape == s && p.strides[full] == std::vector<int64_t>{hw, 1} &&
                p.strides[1 - full] == std::vector<int64_t>{1, 0})
                return full;
        return -1;
    }

    // The blocked operand [C/B][H*W][B] against the per-channel one padded to [C/B][1][B].
    void forward_channels(const std::vector<Tensor>& inputs, Tensor& out, const ChannelState& st,
                          const ExecContext& ctx) const
    {
        const int64_t block = channel_block(), blocks = (st.channels + block - 1) / block;
        float* padded = ctx.scratch_as<float>(st.padded);
        const float* per_channel = inputs[1 - st.full].data<float>();
        std::fill(std::copy(per_channel, per_channel + st.channels, padded), padded + blocks * block, 0.f);
        std::vector<Tensor> in(2);
        in[st.full] = Tensor::wrap(const_cast<void*>(inputs[st.full].raw()), {blocks, st.pixels, block});
        in[1 - st.full] = Tensor::wrap(padded, {blocks, 1, block});
        Tensor y = Tensor::wrap(out.raw(), {blocks, st.pixels, block});
        compute(broadcast_numpy(in[0].shape(), in[1].shape()), in, y, ParallelRunner(ctx));
    }

    // A op B by plan p (inputs widened from halves first for the typed table).
    void compute(const BroadcastPlan& p, const std::vector<Tensor>& inputs, Tensor& out, const ParallelRunner& run) const
    {
        auto run_plan = [&](const std::vector<Tensor>& in, Tensor& y) {
            if (y.shape() != p.out_shape)
                fail("output shape ", shape_str(y.shape()), " != broadcast shape ", shape_str(p.out_shape));
            if (typed_)
                typed_ops::run_binary(op_, p, in[0], in[1], y, run);
            else
                kNcnnKernels[static_cast<size_t>(op_)](p, in[0].data<float>(), in[1].data<float>(), y.data<float>(), run);
        };
        if (typed_ && typed_ops::any_half(inputs))
            typed_ops::run_widened(inputs, out, run_plan);
        else
            run_plan(inputs, out);
    }

    bool typed_ = false;
    int op_ = 0;
    bool with_scalar_ = false;
    float b_ = 0.f;
    BroadcastRule rule_ = BroadcastRule::Ncnn;
};

} // namespace

std::unique_ptr<Op> make_binary_op() { return std::make_unique<BinaryOp>(); }

} // namespace kestrel
