// SequenceLength (ONNX): the number of elements of a sequence, an int64 scalar.
#include "ops/common/op_util.h"
#include "ops/sequence/sequence_util.h"

namespace kestrel {

namespace {

class SequenceLength : public sequence::ValueOp {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        sequence::expect_sequence(in[0], "input 0");
        out[0] = TensorDesc(Shape{}, DType::I64);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        out[0].data<int64_t>()[0] = in[0].numel();
    }
};

} // namespace

std::unique_ptr<Op> make_sequence_length() { return std::make_unique<SequenceLength>(); }

} // namespace kestrel
