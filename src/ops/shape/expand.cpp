// Expand (ONNX): broadcasts input 0 (any dtype) with the shape in input 1 (1-D
// integers) by numpy rules: the output shape is the broadcast of both (a 1 in
// the shape keeps the input's dim). Param 20=dynamic (see nd_common.cpp).
#include "core/dtype_dispatch.h"
#include "kernels/broadcast.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Expand : public Op {
public:
    void load_param(const ParamDict& pd) override { dynamic_ = pd.get_int(20, 0) != 0; }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        check(in[1].shape.size() == 1, "shape (input 1) must be 1-D, got ", shape_str(in[1].shape));
        if (!in[1].value.defined() && dynamic_) {
            // Placeholder: the input lifted to the target rank; forward() gives the real shape.
            Shape s = in[0].shape;
            if (static_cast<int64_t>(s.size()) < in[1].shape[0])
                s.insert(s.begin(), static_cast<size_t>(in[1].shape[0]) - s.size(), 1);
            out[0] = TensorDesc(s, in[0].dtype);
            return;
        }
        out[0] = TensorDesc(target(in[0].shape, nd::known_value(in[1], "shape (input 1)")), in[0].dtype);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape s = target(in[0].shape(), in[1]);
        if (out[0].shape() != s) out[0] = Tensor(s, in[0].dtype());
        const BroadcastPlan plan = broadcast_to(in[0].shape(), s);
        nd::broadcast_copy(plan, in[0], out[0], ctx);
    }

private:
    static Shape target(const Shape& in, const Tensor& value)
    {
        return broadcast_numpy(in, nd::shape_value(value, "shape (input 1)")).out_shape;
    }
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_nd_expand() { return std::make_unique<Expand>(); }

} // namespace kestrel
