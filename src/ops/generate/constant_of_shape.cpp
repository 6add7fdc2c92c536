// ConstantOfShape (ONNX): a tensor of the shape in input 0 (1-D integers, >= 0;
// empty = scalar) filled with one value. Param 0=dtype (kestrel::DType code,
// default F32), 1=has_value (default 1: one weight, a 1-element tensor of that
// dtype, holds the value; 0: the value is zero). Param 20=dynamic (see
// common/tensor_util.cpp).
#include <algorithm>
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class ConstantOfShape : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        dtype_ = dtype_param(pd, 0, DType::F32, "dtype");
        has_value_ = pd.get_int(1, 1) != 0;
        dynamic_ = pd.get_int(20, 0) != 0;
    }
    void load_model(WeightReader& wr) override
    {
        value_ = has_value_ ? wr.load_typed(Shape{1}, dtype_) : Tensor::zeros(Shape{1}, dtype_);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        check(in[0].shape.size() == 1, "shape (input 0) must be 1-D, got ", shape_str(in[0].shape));
        if (!in[0].value.defined() && dynamic_) {
            out[0] = TensorDesc(Shape(static_cast<size_t>(in[0].shape[0]), 1), dtype_); // placeholder
            return;
        }
        out[0] = TensorDesc(nd::shape_value(nd::known_value(in[0], "shape (input 0)"), "shape (input 0)"), dtype_);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 0); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape s = nd::shape_value(in[0], "shape (input 0)");
        if (out[0].shape() != s) out[0] = Tensor(s, dtype_);
        auto fill = [&](auto tag) {
            using U = typename decltype(tag)::type;
            U v;
            std::memcpy(&v, value_.raw(), sizeof(U));
            std::fill_n(out[0].data<U>(), out[0].numel(), v);
        };
        nd::visit_element_size(dtype_size(dtype_), fill);
    }
    int64_t weight_bytes() const override { return has_value_ ? static_cast<int64_t>(dtype_size(dtype_)) : 0; }

private:
    DType dtype_ = DType::F32;
    bool has_value_ = true;
    bool dynamic_ = false;
    Tensor value_;
};

} // namespace

std::unique_ptr<Op> make_constant_of_shape() { return std::make_unique<ConstantOfShape>(); }

} // namespace kestrel
