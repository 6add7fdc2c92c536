// SequenceAt (ONNX): input 0 a sequence, input 1 a position (negative:
// from the end); the element there. Param 0: the elements' dtype when the
// converter knows it (-1: not), for the placeholder planned before the
// sequence's values are known.
#include "ops/common/op_util.h"
#include "ops/sequence/sequence_util.h"

namespace kestrel {

namespace {

class SequenceAt : public sequence::ValueOp {
public:
    void load_param(const ParamDict& pd) override { dtype_ = sequence::element_dtype_param(pd, 0); }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        sequence::expect_sequence(in[0], "input 0");
        if (in[0].value.defined() && in[1].value.defined()) {
            const Tensor item = element(in[0].value, in[1].value);
            out[0] = TensorDesc(item.shape(), item.dtype());
            return;
        }
        out[0] = TensorDesc(Shape{0}, sequence::element_dtype(dtype_)); // a placeholder
    }
    bool dynamic_output_shape() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        out[0] = element(in[0], in[1]);
    }

private:
    static Tensor element(const Tensor& seq, const Tensor& position)
    {
        const std::vector<Tensor> items = seq.items();
        return items[static_cast<size_t>(
            sequence::position(position, static_cast<int64_t>(items.size()), 0, "position (input 1)"))];
    }
    int dtype_ = -1;
};

} // namespace

std::unique_ptr<Op> make_sequence_at() { return std::make_unique<SequenceAt>(); }

} // namespace kestrel
