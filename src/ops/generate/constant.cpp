// Constant: a tensor of any dtype (strings too) and rank stored in the .bin (our layer, used
// by imported ONNX models). Params: 0=dtype (kestrel::DType code), 1=shape
// (int array, outermost first; absent = scalar). The runtime uses the value
// directly (no per-run copy), and it is known while planning.
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Constant : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        dtype_ = dtype_param(pd, 0, DType::F32, "dtype code", true);
        shape_.clear();
        for (int d : pd.get_ints(1)) {
            check(d >= 0, "dims (param 1) must be >= 0, got ", d);
            shape_.push_back(d);
        }
        shape_numel(shape_); // rejects overflow early
    }
    void load_model(WeightReader& wr) override { value_ = wr.load_typed(shape_, dtype_); }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 0, 0);
        expect_output_count(out, 1);
        out[0] = TensorDesc(shape_, dtype_);
    }
    Tensor constant_value() const override { return value_; }
    int64_t weight_bytes() const override { return value_.defined() ? static_cast<int64_t>(value_.nbytes()) : 0; }
    void forward(const std::vector<Tensor>&, std::vector<Tensor>& out, const ExecContext&) const override
    {
        if (dtype_ == DType::String)
            std::copy_n(value_.data<std::string>(), value_.numel(), out[0].data<std::string>());
        else
            std::copy_n(static_cast<const uint8_t*>(value_.raw()), value_.nbytes(), static_cast<uint8_t*>(out[0].raw()));
    }

private:
    DType dtype_ = DType::F32;
    Shape shape_;
    Tensor value_;
};

} // namespace

std::unique_ptr<Op> make_constant() { return std::make_unique<Constant>(); }

} // namespace kestrel
