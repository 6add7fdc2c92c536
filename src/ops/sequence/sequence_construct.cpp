// SequenceConstruct (ONNX; SequenceEmpty is the case of no input): a
// sequence of its inputs, in order, all of one dtype. Param 0: the element
// dtype of an empty sequence (unused otherwise).
#include "ops/common/op_util.h"
#include "ops/sequence/sequence_util.h"

namespace kestrel {

namespace {

class SequenceConstruct : public Op {
public:
    bool takes_strings() const override { return true; } // holds the tensors, copies no element
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_output_count(out, 1);
        for (const TensorDesc& d : in) {
            check(d.dtype != DType::Sequence, "the elements must be tensors, not sequences");
            check(d.dtype == in[0].dtype, "the elements must have one dtype, got ", dtype_name(in[0].dtype), " and ",
                  dtype_name(d.dtype));
        }
        out[0] = sequence::desc_of(static_cast<int64_t>(in.size()));
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        sequence::set_items(out[0], in);
    }
};

} // namespace

std::unique_ptr<Op> make_sequence_construct() { return std::make_unique<SequenceConstruct>(); }

} // namespace kestrel
