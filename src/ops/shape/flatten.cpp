// Flatten (ncnn): the input as one row of all its values (a view, any dtype).
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Flatten : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        out[0] = TensorDesc{{shape_numel(in[0].shape)}, in[0].dtype};
    }
    bool outputs_alias_input() const override { return true; }
    void forward(const std::vector<Tensor>&, std::vector<Tensor>&, const ExecContext&) const override {}
};

} // namespace

std::unique_ptr<Op> make_flatten() { return std::make_unique<Flatten>(); }

} // namespace kestrel
