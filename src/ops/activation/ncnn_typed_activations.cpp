// ncnn's one-input layers whose function is an op of the typed unary table
// (elementwise/typed_ops.h, what ONNX's unaries run on): each is ncnn's params
// read into that op's, float32, in place. The table's functors compute the
// formula accurately (expm1, log1p), where ncnn's expf(x) - 1 loses digits
// near 0.
//   AbsVal    |x|
//   BNLL      log(1 + e^x)               (Softplus)
//   Softplus  log(1 + e^x)
//   Erf       erf(x)
//   ELU       0=alpha (0.1):  x < 0 ? alpha (e^x - 1) : x
//   CELU      0=alpha (1, not 0):  x < 0 ? alpha (e^(x / alpha) - 1) : x
//   SELU      0=alpha (1.67326324) 1=lambda (1.050700987):
//             x < 0 ? lambda alpha (e^x - 1) : lambda x
//   Shrink    0=bias (0) 1=lambd (0.5):  x < -lambd ? x + bias : x > lambd ? x - bias : 0
#include "ops/common/op_util.h"
#include "ops/elementwise/typed_ops.h"

namespace kestrel {

namespace {

// ncnn's params -> the typed op's alpha / beta.
using ReadParams = void (*)(const ParamDict&, typed_ops::OpParams&);

class TypedActivation : public Op {
public:
    BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, bool) const override
    {
        return same_shape_elementwise(in, out);
    }
    TypedActivation(const char* op, ReadParams read) : op_(typed_ops::unary_index(op)), read_(read) {}

    void load_param(const ParamDict& pd) override
    {
        p_ = typed_ops::unary_defaults(op_);
        if (read_) read_(pd, p_);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        infer_float_map(in, out);
    }
    bool supports_inplace() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        typed_ops::run_unary(op_, in[0], out[0], p_, ParallelRunner(ctx));
    }

private:
    int op_;
    ReadParams read_;
    typed_ops::OpParams p_;
};

std::unique_ptr<Op> make(const char* op, ReadParams read = nullptr) { return std::make_unique<TypedActivation>(op, read); }

} // namespace

std::unique_ptr<Op> make_absval() { return make("Abs"); }
std::unique_ptr<Op> make_bnll() { return make("Softplus"); }
std::unique_ptr<Op> make_softplus() { return make("Softplus"); }
std::unique_ptr<Op> make_erf() { return make("Erf"); }
std::unique_ptr<Op> make_elu()
{
    return make("Elu", [](const ParamDict& pd, typed_ops::OpParams& p) { p.alpha = pd.get_float(0, 0.1f); });
}
std::unique_ptr<Op> make_celu()
{
    return make("Celu", [](const ParamDict& pd, typed_ops::OpParams& p) {
        p.alpha = pd.get_float(0, 1.f);
        check(p.alpha != 0.0, "alpha (param 0) must not be 0");
    });
}
std::unique_ptr<Op> make_selu()
{
    return make("Selu", [](const ParamDict& pd, typed_ops::OpParams& p) {
        p.alpha = pd.get_float(0, 1.67326324f);
        p.beta = pd.get_float(1, 1.050700987f); // the table's gamma
    });
}
std::unique_ptr<Op> make_shrink()
{
    return make("Shrink", [](const ParamDict& pd, typed_ops::OpParams& p) {
        p.beta = pd.get_float(0, 0.f);  // bias
        p.alpha = pd.get_float(1, 0.5f); // lambd
    });
}

} // namespace kestrel
