// Gather (ONNX): picks slices of input 0 (any dtype) along 0=axis (default 0)
// at the integer indices of input 1 (any rank; negative counts from the end).
// Output shape: data[:axis] + indices.shape + data[axis+1:].
#include <cstring>

#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class Gather : public Op {
public:
    void load_param(const ParamDict& pd) override { axis_ = pd.get_int(0, 0); }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        const Shape& d = in[0].shape;
        check(!d.empty(), "data (input 0) must have rank >= 1");
        check(nd::is_integer_dtype(in[1].dtype), "indices (input 1) must be integers, got ", dtype_name(in[1].dtype));
        const int a = nd::normalize_axis(axis_, static_cast<int64_t>(d.size()), "axis (param 0)");
        Shape s(d.begin(), d.begin() + a);
        s.insert(s.end(), in[1].shape.begin(), in[1].shape.end());
        s.insert(s.end(), d.begin() + a + 1, d.end());
        out[0] = TensorDesc(s, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& d = in[0].shape();
        const int a = nd::normalize_axis(axis_, in[0].rank(), "axis (param 0)");
        const int64_t outer = nd::dims_product(d, 0, static_cast<size_t>(a));
        const int64_t dim = d[static_cast<size_t>(a)];
        const size_t block = static_cast<size_t>(nd::dims_product(d, static_cast<size_t>(a) + 1, d.size())) *
                             dtype_size(in[0].dtype());
        std::vector<int64_t> idx = nd::int_values(in[1], "indices (input 1)");
        for (int64_t& i : idx) i = nd::resolve_index(i, dim, static_cast<size_t>(a));
        const int64_t n = static_cast<int64_t>(idx.size());
        if (block == 0 || n == 0) return;
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        auto body = [&](int64_t t0, int64_t t1) {
            for (int64_t t = t0; t < t1; ++t) {
                const int64_t o = t / n, j = t % n;
                std::memcpy(dst + static_cast<size_t>(t) * block,
                            src + static_cast<size_t>(o * dim + idx[static_cast<size_t>(j)]) * block, block);
            }
        };
        if (outer * n * static_cast<int64_t>(block) >= 65536)
            ctx.parallel_for(outer * n, body);
        else
            body(0, outer * n);
    }

private:
    int axis_ = 0;
};

} // namespace

std::unique_ptr<Op> make_nd_gather() { return std::make_unique<Gather>(); }

} // namespace kestrel
