// GatherND (ONNX): input 0 data (rank r, any dtype), input 1 integer indices
// (rank q, last dim m <= r - b), param 0=batch_dims b (default 0). Each index
// tuple picks the slice data[batch.., i1..im, :]. Output shape:
// indices.shape[:-1] + data.shape[b+m:].
#include <cstring>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class GatherND : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        batch_dims_ = pd.get_int(0, 0);
        check(batch_dims_ >= 0, "batch_dims (param 0) must be >= 0, got ", batch_dims_);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        check(nd::is_integer_dtype(in[1].dtype), "indices (input 1) must be integers, got ", dtype_name(in[1].dtype));
        out[0] = TensorDesc(out_shape(in[0].shape, in[1].shape), in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& d = in[0].shape();
        const Shape& is = in[1].shape();
        out_shape(d, is);
        const size_t b = static_cast<size_t>(batch_dims_);
        const size_t m = static_cast<size_t>(is.back());
        const int64_t batches = nd::dims_product(d, 0, b);
        const int64_t tuples = nd::dims_product(is, b, is.size() - 1); // per batch
        const size_t es = dtype_size(in[0].dtype());
        const size_t block = static_cast<size_t>(nd::dims_product(d, b + m, d.size())) * es;
        const int64_t batch_elems = nd::dims_product(d, b, d.size());
        const Shape ds = nd::dense_strides(d);
        const std::vector<int64_t> idx = nd::int_values(in[1], "indices (input 1)");
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        for (int64_t bi = 0; bi < batches; ++bi) {
            for (int64_t t = 0; t < tuples; ++t) {
                const int64_t* tuple = idx.data() + (bi * tuples + t) * static_cast<int64_t>(m);
                const int64_t off = bi * batch_elems + nd::tuple_offset(tuple, m, d, ds, b);
                if (block)
                    std::memcpy(dst + static_cast<size_t>(bi * tuples + t) * block, src + static_cast<size_t>(off) * es,
                                block);
            }
        }
    }

private:
    Shape out_shape(const Shape& d, const Shape& is) const
    {
        const size_t b = static_cast<size_t>(batch_dims_);
        check(!d.empty() && !is.empty(), "data ", shape_str(d), " and indices ", shape_str(is), " must have rank >= 1");
        check(b < is.size() && b < d.size(), "batch_dims (param 0) ", b, " must be less than both ranks (data ",
              shape_str(d), ", indices ", shape_str(is), ")");
        for (size_t k = 0; k < b; ++k)
            check(d[k] == is[k], "batch dim ", k, " differs: data ", shape_str(d), ", indices ", shape_str(is));
        const int64_t m = is.back();
        check(m >= 1 && static_cast<size_t>(m) <= d.size() - b, "indices' last dim ", m, " must be 1..",
              d.size() - b, " for data ", shape_str(d), " with batch_dims ", b);
        Shape s(is.begin(), is.end() - 1);
        s.insert(s.end(), d.begin() + static_cast<int64_t>(b) + m, d.end());
        return s;
    }
    int batch_dims_ = 0;
};

} // namespace

std::unique_ptr<Op> make_nd_gather_nd() { return std::make_unique<GatherND>(); }

} // namespace kestrel
