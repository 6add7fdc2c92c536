// ConcatFromSequence (ONNX): a sequence's tensors joined along param 0
// (axis, negative from the end), or (param 1, new_axis) stacked along a new
// axis there. Param 2: the elements' dtype when the converter knows it (-1:
// not), for the placeholder planned before the sequence's values are known.
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"
#include "ops/sequence/sequence_util.h"

namespace kestrel {

namespace {

class ConcatFromSequence : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, 0);
        new_axis_ = pd.get_int(1, 0) != 0;
        dtype_ = sequence::element_dtype_param(pd, 2);
    }
    bool takes_sequences() const override { return true; }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        sequence::expect_sequence(in[0], "input 0");
        if (in[0].value.defined()) {
            const Tensor y = joined(in[0].value.items());
            out[0] = TensorDesc(y.shape(), y.dtype());
            return;
        }
        out[0] = TensorDesc(Shape{0}, sequence::element_dtype(dtype_)); // a placeholder
    }
    bool dynamic_output_shape() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        out[0] = joined(in[0].items());
    }

private:
    Tensor joined(const std::vector<Tensor>& items) const
    {
        check(!items.empty(), "cannot concatenate an empty sequence");
        const Tensor& first = items[0];
        check(!dtype_holds_objects(first.dtype()), "cannot concatenate ", dtype_name(first.dtype()), " tensors");
        const int a = nd::normalize_axis(axis_, first.rank() + (new_axis_ ? 1 : 0), "axis (param 0)");
        Shape shape = first.shape();
        if (new_axis_) shape.insert(shape.begin() + a, 0);
        const Shape first_shape = shape; // the joined axis is summed below
        shape[a] = 0;
        for (const Tensor& t : items) {
            Shape s = t.shape();
            if (new_axis_) s.insert(s.begin() + a, 1);
            Shape expected = first_shape;
            if (s.size() == expected.size()) expected[a] = s[a];
            check(t.dtype() == first.dtype() && s == expected, "the elements must match but along axis ", a, ": ",
                  shape_str(first.shape()), " and ", shape_str(t.shape()));
            shape[a] += s[a];
        }
        Tensor y(shape, first.dtype());
        int64_t at = 0;
        for (const Tensor& t : items) {
            Shape s = t.shape();
            if (new_axis_) s.insert(s.begin() + a, 1);
            nd::put_axis_range(y, a, at, t.reshaped(s));
            at += s[a];
        }
        return y;
    }
    int axis_ = 0, dtype_ = -1;
    bool new_axis_ = false;
};

} // namespace

std::unique_ptr<Op> make_concat_from_sequence() { return std::make_unique<ConcatFromSequence>(); }

} // namespace kestrel
