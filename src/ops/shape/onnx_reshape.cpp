// ReshapeND (ONNX Reshape): input 0 data (any dtype), input 1 the target shape
// (1-D integer tensor). A 0 copies the input dim at the same index (unless
// 0=allowzero=1, where 0 is a real zero dim), one -1 is inferred.
// Params: 0=allowzero (0), 20=dynamic (0; see nd_common.cpp). The output is a
// view of input 0; with dynamic=1 it is a copy (the shape may be known only at
// run time).
#include <cstring>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class ReshapeND : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        allowzero_ = pd.get_int(0, 0) != 0;
        dynamic_ = pd.get_int(20, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        check(in[1].shape.size() == 1, "shape (input 1) must be 1-D, got ", shape_str(in[1].shape));
        if (!in[1].value.defined() && dynamic_) {
            // Placeholder of the right rank and element count; forward() gives the real shape.
            Shape s(static_cast<size_t>(in[1].shape[0]), 1);
            if (!s.empty()) s[0] = shape_numel(in[0].shape);
            out[0] = TensorDesc(s, in[0].dtype);
            return;
        }
        out[0] = TensorDesc(target(in[0].shape, nd::known_value(in[1], "shape (input 1)")), in[0].dtype);
    }
    bool outputs_alias_input() const override { return !dynamic_; }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape s = target(in[0].shape(), in[1]);
        if (out[0].shape() != s) out[0] = Tensor(s, in[0].dtype());
        std::memcpy(out[0].raw(), in[0].raw(), in[0].nbytes());
    }

private:
    Shape target(const Shape& in, const Tensor& shape_value) const
    {
        const std::vector<int64_t> v = nd::int_values(shape_value, "shape (input 1)");
        Shape s(v.size(), 1); // the -1 dim counts as 1 until it is inferred
        int infer_at = -1;
        for (size_t i = 0; i < v.size(); ++i) {
            if (v[i] == -1) {
                check(infer_at < 0, "shape ", shape_str(v), " has more than one -1");
                infer_at = static_cast<int>(i);
                continue;
            }
            check(v[i] >= 0, "shape ", shape_str(v), " has a negative dim other than -1");
            if (v[i] == 0 && !allowzero_) {
                check(i < in.size(), "shape ", shape_str(v), ": 0 at index ", i, " copies an input dim, but the input ",
                      shape_str(in), " has rank ", in.size());
                s[i] = in[i];
            } else {
                s[i] = v[i];
            }
        }
        const int64_t known = shape_numel(s); // throws on int64 overflow
        const int64_t total = shape_numel(in);
        if (infer_at >= 0) {
            check(known != 0, "shape ", shape_str(v), " cannot infer the -1 dim next to a zero dim");
            check(total % known == 0, "cannot reshape ", shape_str(in), " (", total, " elements) to ", shape_str(v));
            s[static_cast<size_t>(infer_at)] = total / known;
        }
        check(shape_numel(s) == total, "cannot reshape ", shape_str(in), " (", total, " elements) to ", shape_str(v),
              " (", shape_numel(s), " elements)");
        return s;
    }
    bool allowzero_ = false;
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_nd_reshape() { return std::make_unique<ReshapeND>(); }

} // namespace kestrel
