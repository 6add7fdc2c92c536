// Dropout at inference: the data passes through.
//   ncnn's form   one float32 input, multiplied by 0=scale (default 1).
//   ONNX's form   20=1: input 0 data (any dtype); optional input 1 ratio (one
//                 float, [0, 1), default 0.5); optional input 2 training_mode
//                 (one bool, default false). Output 0 is the data unchanged;
//                 optional output 1 the mask, all true (21=mask dtype, a
//                 kestrel::DType code, default Bool; Dropout before opset 10
//                 had a mask of the data's type). Training mode with ratio > 0
//                 drops random elements: an inference engine has no use for
//                 that, so it is an error rather than a silent identity.
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Dropout : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        onnx_ = onnx_form(pd, "Dropout");
        scale_ = onnx_ ? 1.f : pd.get_float(0, 1.f);
        mask_dtype_ = dtype_param(pd, 21, DType::Bool, "mask dtype");
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        if (!onnx_) {
            expect_input_count(in, 1, 1);
            expect_output_count(out, 1);
            expect_f32(in[0]);
            out[0] = in[0];
            return;
        }
        expect_input_count(in, 1, 3);
        check(out.size() == 1 || out.size() == 2, "expects 1 or 2 outputs (output, mask), got ", out.size());
        if (in.size() >= 2) {
            check(dtype_is_float(in[1].dtype), "ratio (input 1) must be a float tensor, got ", dtype_name(in[1].dtype));
            check(shape_numel(in[1].shape) == 1, "ratio (input 1) must hold one value, got shape ", shape_str(in[1].shape));
        }
        if (in.size() == 3) {
            check(in[2].dtype == DType::Bool, "training_mode (input 2) must be bool, got ", dtype_name(in[2].dtype));
            check(shape_numel(in[2].shape) == 1, "training_mode (input 2) must hold one value, got shape ",
                  shape_str(in[2].shape));
        }
        // Values known while planning are checked now, the others in forward().
        const bool known = (in.size() < 2 || in[1].value.defined()) && (in.size() < 3 || in[2].value.defined());
        if (known) check_mode(in.size() >= 2 ? &in[1].value : nullptr, in.size() == 3 ? &in[2].value : nullptr);
        out[0] = TensorDesc(in[0].shape, in[0].dtype);
        if (out.size() == 2) out[1] = TensorDesc(in[0].shape, mask_dtype_);
    }
    bool supports_inplace() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        if (!onnx_) {
            const float* x = in[0].data<float>();
            float* y = out[0].data<float>();
            ctx.parallel_for(in[0].numel(), [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) y[i] = x[i] * scale_;
            });
            return;
        }
        check_mode(in.size() >= 2 ? &in[1] : nullptr, in.size() == 3 ? &in[2] : nullptr);
        if (out[0].raw() != in[0].raw()) std::memcpy(out[0].raw(), in[0].raw(), in[0].nbytes());
        if (out.size() == 2) {
            visit_dtype(mask_dtype_, [&](auto tag) {
                using T = typename decltype(tag)::type;
                T* m = out[1].data<T>();
                const T one = convert_value<T>(1.0);
                for (int64_t i = 0; i < out[1].numel(); ++i) m[i] = one;
            });
        }
    }

private:
    // ratio/training_mode are nullptr when absent.
    static void check_mode(const Tensor* ratio_in, const Tensor* training_in)
    {
        double ratio = 0.5;
        if (ratio_in)
            visit_dtype(ratio_in->dtype(), [&](auto tag) { ratio = to_double(*ratio_in->data<typename decltype(tag)::type>()); });
        check(ratio >= 0 && ratio < 1, "ratio (input 1) must be in [0, 1), got ", ratio);
        const bool training = training_in && *training_in->data<uint8_t>() != 0;
        check(!training || ratio == 0, "training mode with ratio ", ratio,
              " > 0 drops random elements, which is not supported (inference only)");
    }

    bool onnx_ = false;
    float scale_ = 1.f;
    DType mask_dtype_ = DType::Bool;
};

} // namespace

std::unique_ptr<Op> make_dropout() { return std::make_unique<Dropout>(); }

} // namespace kestrel
