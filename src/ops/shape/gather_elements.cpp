// GatherElements (ONNX): out[i0..ik..] = data[i0..indices[i0..ik..]..] along
// 0=axis (default 0). Data any dtype; indices integers of data's rank, each
// dim no larger than data's (except along axis); the output has indices' shape.
#include <cstring>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class GatherElements : public Op {
public:
    void load_param(const ParamDict& pd) override { axis_ = pd.get_int(0, 0); }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        check_shapes(in[0].shape, in[1].shape);
        check(nd::is_integer_dtype(in[1].dtype), "indices (input 1) must be integers, got ", dtype_name(in[1].dtype));
        out[0] = TensorDesc(in[1].shape, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& d = in[0].shape();
        const Shape& is = in[1].shape();
        const int a = check_shapes(d, is);
        const std::vector<int64_t> offsets =
            nd::element_offsets(d, is, a, nd::int_values(in[1], "indices (input 1)"));
        const size_t es = dtype_size(in[0].dtype());
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        for (size_t t = 0; t < offsets.size(); ++t)
            std::memcpy(dst + t * es, src + static_cast<size_t>(offsets[t]) * es, es);
    }

private:
    int check_shapes(const Shape& d, const Shape& is) const { return nd::check_element_indices(d, is, axis_); }
    int axis_ = 0;
};

} // namespace

std::unique_ptr<Op> make_nd_gather_elements() { return std::make_unique<GatherElements>(); }

} // namespace kestrel
