// ScatterND (ONNX): a copy of input 0 data (rank r, any dtype) where each index
// tuple of input 1 indices (shape [..., k], k <= r) selects the slice
// data[i1..ik, :], which input 2 updates (shape indices.shape[:-1] +
// data.shape[k:]) replaces or is combined into per 0=reduction (0 none, 1 add,
// 2 mul, 3 max, 4 min). Tuples are applied in order.
#include <algorithm>
#include <cstring>

#include "core/dtype_dispatch.h"
#include "ops/op_util.h"

namespace kestrel {

// Helpers from nd_common.cpp.
namespace nd {
int normalize_axis(int64_t axis, int64_t rank, const char* what);
bool is_integer_dtype(DType t);
std::vector<int64_t> int_values(const Tensor& t, const char* what);
int64_t int_scalar(const Tensor& t, const char* what);
const Tensor& known_value(const TensorDesc& d, const char* what);
Shape dense_strides(const Shape& s);
int64_t dims_product(const Shape& s, size_t begin, size_t end);
void strided_copy(const void* src, int64_t src_offset, const Shape& dims, const std::vector<int64_t>& strides,
                  void* dst, size_t esize, const ExecContext* ctx);
} // namespace nd

namespace {

// Combines an existing value with an update: 0 none (replace), 1 add, 2 mul, 3 max, 4 min.
template <class T> T combine(T a, T b, int reduction)
{
    if constexpr (std::is_same_v<T, bool>) {
        switch (reduction) {
        case 1: case 3: return a || b;
        case 2: case 4: return a && b;
        default: return b;
        }
    } else if constexpr (std::is_arithmetic_v<T>) {
        switch (reduction) {
        case 1: return static_cast<T>(a + b);
        case 2: return static_cast<T>(a * b);
        case 3: return std::max(a, b);
        case 4: return std::min(a, b);
        default: return b;
        }
    } else {
        const double x = to_double(a), y = to_double(b);
        switch (reduction) {
        case 1: return convert_value<T>(x + y);
        case 2: return convert_value<T>(x * y);
        case 3: return convert_value<T>(std::max(x, y));
        case 4: return convert_value<T>(std::min(x, y));
        default: return b;
        }
    }
}

class ScatterND : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        reduction_ = pd.get_int(0, 0);
        check(reduction_ >= 0 && reduction_ <= 4, "reduction (param 0) must be 0..4 (none, add, mul, max, min), got ",
              reduction_);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 3);
        expect_output_count(out, 1);
        check(nd::is_integer_dtype(in[1].dtype), "indices (input 1) must be integers, got ", dtype_name(in[1].dtype));
        check(in[2].dtype == in[0].dtype, "updates (input 2) are ", dtype_name(in[2].dtype), " but data is ",
              dtype_name(in[0].dtype));
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
                int64_t off = 0;
                for (size_t j = 0; j < k; ++j) {
                    int64_t i = idx[static_cast<size_t>(t) * k + j];
                    check(i >= -d[j] && i < d[j], "index ", i, " is out of range for axis ", j, " of size ", d[j]);
                    if (i < 0) i += d[j];
                    off += i * ds[j];
                }
                for (int64_t e = 0; e < block; ++e) o[off + e] = combine(o[off + e], upd[t * block + e], reduction_);
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
