// SequenceErase (ONNX): input 0 a sequence, input 1 (optional) the position
// to remove (negative: from the end; absent: the last).
#include "ops/common/op_util.h"
#include "ops/sequence/sequence_util.h"

namespace kestrel {

namespace {

class SequenceErase : public sequence::ValueOp {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 2);
        expect_output_count(out, 1);
        out[0] = sequence::desc_of(std::max<int64_t>(sequence::length(in[0], "input 0") - 1, 0));
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        std::vector<Tensor> items = in[0].items();
        const int64_t n = static_cast<int64_t>(items.size());
        check(n > 0, "cannot erase from an empty sequence");
        const int64_t at = in.size() > 1 ? sequence::position(in[1], n, 0, "position (input 1)") : n - 1;
        items.erase(items.begin() + at);
        sequence::set_items(out[0], items);
    }
};

} // namespace

std::unique_ptr<Op> make_sequence_erase() { return std::make_unique<SequenceErase>(); }

} // namespace kestrel
