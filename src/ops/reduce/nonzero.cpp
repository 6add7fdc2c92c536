// NonZero (ONNX): the indices of the non-zero elements of input 0 (any dtype),
// as an int64 (rank, count) tensor in row-major order (a scalar counts as
// rank 1). The count depends on the data: dynamic_output_shape(); infer()
// gives the upper bound (rank, numel).
#include <algorithm>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class NonZero : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        out[0] = TensorDesc({std::max<int64_t>(1, static_cast<int64_t>(in[0].shape.size())), shape_numel(in[0].shape)},
                            DType::I64);
    }
    bool dynamic_output_shape() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape d = in[0].shape().empty() ? Shape{1} : in[0].shape();
        const int64_t n = in[0].numel();
        std::vector<int64_t> hits;
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T* x = in[0].data<T>();
            for (int64_t i = 0; i < n; ++i)
                if (to_double(x[i]) != 0.0) hits.push_back(i);
        });
        const int64_t r = static_cast<int64_t>(d.size()), count = static_cast<int64_t>(hits.size());
        Tensor t({r, count}, DType::I64);
        int64_t* o = t.data<int64_t>();
        for (int64_t j = 0; j < count; ++j) {
            int64_t rem = hits[static_cast<size_t>(j)];
            for (int64_t k = r - 1; k >= 0; --k) {
                o[k * count + j] = rem % d[static_cast<size_t>(k)];
                rem /= d[static_cast<size_t>(k)];
            }
        }
        out[0] = t;
    }
};

} // namespace

std::unique_ptr<Op> make_nonzero() { return std::make_unique<NonZero>(); }

} // namespace kestrel
