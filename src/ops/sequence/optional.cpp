// ONNX's optionals (DType::Optional tensors holding none or one value, a
// tensor or a sequence, Tensor::optional):
//   Optional: input 0 (optional) wrapped; no input: none.
//   OptionalHasElement: whether input 0 holds a value (a tensor or sequence
//     given as it is does; no input does not); a bool scalar.
//   OptionalGetElement: input 0's value (a tensor or sequence as it is); an
//     empty optional is an error. Param 0: the value's dtype when the
//     converter knows it (-1: not; a sequence's 13), for the placeholder.
#include "ops/common/op_util.h"
#include "ops/sequence/sequence_util.h"

namespace kestrel {

namespace {

class Optional : public sequence::ValueOp {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 0, 1);
        expect_output_count(out, 1);
        check(in.empty() || in[0].dtype != DType::Optional, "an optional cannot hold an optional");
        out[0] = TensorDesc(Shape{static_cast<int64_t>(in.size())}, DType::Optional);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        sequence::set_items(out[0], in, DType::Optional);
    }
};

class OptionalHasElement : public sequence::ValueOp {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 0, 1);
        expect_output_count(out, 1);
        out[0] = TensorDesc(Shape{}, DType::Bool);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const bool has = !in.empty() && (!in[0].is_optional() || in[0].numel() == 1);
        out[0].data<uint8_t>()[0] = has ? 1 : 0;
    }
};

class OptionalGetElement : public sequence::ValueOp {
public:
    void load_param(const ParamDict& pd) override
    {
        dtype_ = pd.get_int(0, -1);
        check(dtype_ >= -1 && dtype_ <= static_cast<int>(DType::Sequence), "the value's dtype (param 0) ", dtype_,
              " is not -1..13");
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        if (in[0].dtype != DType::Optional) {
            out[0] = in[0];
            return;
        }
        if (in[0].value.defined()) {
            const Tensor v = value(in[0].value);
            out[0] = TensorDesc(v.shape(), v.dtype());
            return;
        }
        out[0] = TensorDesc(Shape{0}, sequence::element_dtype(dtype_)); // a placeholder
    }
    bool dynamic_output_shape() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        out[0] = in[0].is_optional() ? value(in[0]) : in[0];
    }

private:
    static Tensor value(const Tensor& optional)
    {
        check(optional.numel() == 1, "the optional holds no value");
        return optional.items()[0];
    }
    int dtype_ = -1;
};

} // namespace

std::unique_ptr<Op> make_optional() { return std::make_unique<Optional>(); }
std::unique_ptr<Op> make_optional_has_element() { return std::make_unique<OptionalHasElement>(); }
std::unique_ptr<Op> make_optional_get_element() { return std::make_unique<OptionalGetElement>(); }

} // namespace kestrel
