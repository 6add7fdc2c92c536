// Size (ONNX): the input's element count as an int64 scalar. Needs only the
// input's shape, so the runtime evaluates it while planning.
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class SizeOp : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        out[0] = TensorDesc(Shape{}, DType::I64);
    }
    bool outputs_from_shapes_only() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        *out[0].data<int64_t>() = shape_numel(in[0].shape());
    }
};

} // namespace

std::unique_ptr<Op> make_size() { return std::make_unique<SizeOp>(); }

} // namespace kestrel
