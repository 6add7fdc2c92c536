// ScatterND (ONNX): a copy of input 0 data (rank r, any dtype) where each index
// tuple of input 1 indices (shape [..., k], k <= r) selects the slice
// data[i1..ik, :], which input 2 updates (shape indices.shape[:-1] +
// data.shape[k:]) replaces or is combined into per 0=reduction (0 none, 1 add,
// 2 mul, 3 max, 4 min). Tuples are applied in order.
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class ScatterND : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        reduction_ = nd::read_scatter_reduction(pd, 0);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 3);
        expect_output_count(out, 1);
        nd::check_scatter_dtypes(in[0], in[1], in[2]);
        check_shapes(in[0].shape, in[1].shape, in[2].shape);
        out[0] = TensorDesc(in[0].shape, in[0].dtype);
    }
    bool supports_inplace() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& d = in[0].shape();
        const Shape& is = in[1].shape();
        check_shapes(d, is, in[2].shape());
        if (out[0].raw() != in[0].raw()) std::memcpy(out[0].raw(), in[0].raw(), in[0].nbytes());
        const size_t k = static_cast<size_t>(is.back());
        const int64_t tuples = nd::dims_product(is, 0, is.size() - 1);
        const int64_t block = nd::dims_product(d, k, d.size());
        const Shape ds = nd::dense_strides(d);
        const std::vector<int64_t> idx = nd::int_values(in[1], "indices (input 1)");
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T* upd = in[2].data<T>();
            T* o = out[0].data<T>();
            for (int64_t t = 0; t < tuples; ++t) {
                const int64_t off = nd::tuple_offset(idx.data() + t * static_cast<int64_t>(k), k, d, ds, 0);
                for (int64_t e = 0; e < block; ++e)
                    o[off + e] = nd::combine(o[off + e], upd[t * block + e], reduction_);
            }
        });
    }

private:
    void check_shapes(const Shape& d, const Shape& is, const Shape& us) const
    {
        check(!d.empty() && !is.empty(), "data ", shape_str(d), " and indices ", shape_str(is), " must have rank >= 1");
        const int64_t k = is.back();
        check(k >= 1 && static_cast<size_t>(k) <= d.size(), "indices' last dim ", k, " must be 1..", d.size());
        Shape want(is.begin(), is.end() - 1);
        want.insert(want.end(), d.begin() + k, d.end());
        check(us == want, "updates ", shape_str(us), " must have shape ", shape_str(want), " for data ", shape_str(d),
              " and indices ", shape_str(is));
    }
    int reduction_ = 0;
};

} // namespace

std::unique_ptr<Op> make_nd_scatter_nd() { return std::make_unique<ScatterND>(); }

} // namespace kestrel
