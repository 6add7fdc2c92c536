// Eltwise (ncnn): product, (weighted) sum or max of N same-shape inputs.
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Eltwise : public Op {
public:
    enum { kProd = 0, kSum = 1, kMax = 2 };

    void load_param(const ParamDict& pd) override
    {
        op_ = pd.get_int(0, 0);
        check(op_ >= 0 && op_ <= 2, "op_type (param 0) must be 0 (prod), 1 (sum) or 2 (max), got ", op_);
        coeffs_ = pd.get_floats(1);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1 << 12);
        expect_output_count(out, 1);
        for (const auto& d : in) {
            expect_f32(d);
            check(d.shape == in[0].shape, "inputs must have the same shape, got ", shape_str(in[0].shape), " and ",
                  shape_str(d.shape));
        }
        check(coeffs_.empty() || coeffs_.size() == in.size(), "has ", coeffs_.size(), " coefficients for ",
              in.size(), " inputs");
        out[0] = in[0];
    }

    bool supports_inplace() const override { return true; }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        float* y = out[0].data<float>();
        ctx.parallel_for(out[0].numel(), [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
                float acc = coeff(0) * in[0].data<float>()[i];
                for (size_t k = 1; k < in.size(); ++k) {
                    const float v = in[k].data<float>()[i];
                    if (op_ == kProd) acc *= v;
                    else if (op_ == kSum) acc += coeff(k) * v;
                    else acc = std::max(acc, v);
                }
                y[i] = acc;
            }
        });
    }

private:
    float coeff(size_t k) const { return op_ == kSum && !coeffs_.empty() ? coeffs_[k] : 1.f; }
    int op_ = 0;
    std::vector<float> coeffs_;
};

} // namespace

std::unique_ptr<Op> make_eltwise() { return std::make_unique<Eltwise>(); }

} // namespace kestrel
