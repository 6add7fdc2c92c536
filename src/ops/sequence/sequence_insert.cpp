// SequenceInsert (ONNX): input 0 a sequence, input 1 a tensor of its
// elements' dtype, input 2 (optional) the position (negative: from the end;
// absent: at the end).
#include "ops/common/op_util.h"
#include "ops/sequence/sequence_util.h"

namespace kestrel {

namespace {

class SequenceInsert : public sequence::ValueOp {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 3);
        expect_output_count(out, 1);
        check(in[1].dtype != DType::Sequence, "input 1 must be a tensor");
        out[0] = sequence::desc_of(sequence::length(in[0], "input 0") + 1);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        std::vector<Tensor> items = in[0].items();
        const int64_t n = static_cast<int64_t>(items.size());
        check(items.empty() || items[0].dtype() == in[1].dtype(), "the tensor is ", dtype_name(in[1].dtype()),
              ", the sequence's elements ", dtype_name(items.empty() ? in[1].dtype() : items[0].dtype()));
        const int64_t at = in.size() > 2 ? sequence::position(in[2], n, 1, "position (input 2)") : n;
        items.insert(items.begin() + at, in[1]);
        sequence::set_items(out[0], items);
    }
};

} // namespace

std::unique_ptr<Op> make_sequence_insert() { return std::make_unique<SequenceInsert>(); }

} // namespace kestrel
