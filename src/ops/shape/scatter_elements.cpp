// ScatterElements (ONNX; also opset 9-10 Scatter): a copy of input 0 data (any
// dtype) where, for every element of input 2 updates, the element at the same
// position with input 1 indices' value along 0=axis (default 0) is replaced or
// combined per 1=reduction (0 none, 1 add, 2 mul, 3 max, 4 min). Indices and
// updates share a shape of data's rank, each dim no larger than data's.
// Updates are applied in order (with none, the last duplicate wins).
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class ScatterElements : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, 0);
        reduction_ = nd::read_scatter_reduction(pd, 1);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 3);
        expect_output_count(out, 1);
        check_shapes(in[0].shape, in[1].shape, in[2].shape);
        nd::check_scatter_dtypes(in[0], in[1], in[2]);
        out[0] = TensorDesc(in[0].shape, in[0].dtype);
    }
    bool supports_inplace() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& d = in[0].shape();
        const Shape& is = in[1].shape();
        const int a = check_shapes(d, is, in[2].shape());
        if (out[0].raw() != in[0].raw()) std::memcpy(out[0].raw(), in[0].raw(), in[0].nbytes());
        const std::vector<int64_t> offsets =
            nd::element_offsets(d, is, a, nd::int_values(in[1], "indices (input 1)"));
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T* upd = in[2].data<T>();
            T* o = out[0].data<T>();
            for (size_t t = 0; t < offsets.size(); ++t) o[offsets[t]] = nd::combine(o[offsets[t]], upd[t], reduction_);
        });
    }

private:
    int check_shapes(const Shape& d, const Shape& is, const Shape& us) const
    {
        check(is == us, "indices ", shape_str(is), " and updates ", shape_str(us), " must have the same shape");
        return nd::check_element_indices(d, is, axis_);
    }
    int axis_ = 0;
    int reduction_ = 0;
};

} // namespace

std::unique_ptr<Op> make_nd_scatter_elements() { return std::make_unique<ScatterElements>(); }

} // namespace kestrel
