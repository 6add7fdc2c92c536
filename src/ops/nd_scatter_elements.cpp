// ScatterElements (ONNX; also opset 9-10 Scatter): a copy of input 0 data (any
// dtype) where, for every element of input 2 updates, the element at the same
// position with input 1 indices' value along 0=axis (default 0) is replaced or
// combined per 1=reduction (0 none, 1 add, 2 mul, 3 max, 4 min). Indices and
// updates share a shape of data's rank, each dim no larger than data's.
// Updates are applied in order (with none, the last duplicate wins).
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

class ScatterElements : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, 0);
        reduction_ = pd.get_int(1, 0);
        check(reduction_ >= 0 && reduction_ <= 4, "reduction (param 1) must be 0..4 (none, add, mul, max, min), got ",
              reduction_);
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 3);
        expect_output_count(out, 1);
        check_shapes(in[0].shape, in[1].shape, in[2].shape);
        check(nd::is_integer_dtype(in[1].dtype), "indices (input 1) must be integers, got ", dtype_name(in[1].dtype));
        check(in[2].dtype == in[0].dtype, "updates (input 2) are ", dtype_name(in[2].dtype), " but data is ",
              dtype_name(in[0].dtype));
        out[0] = TensorDesc(in[0].shape, in[0].dtype);
    }
    bool supports_inplace() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& d = in[0].shape();
        const Shape& is = in[1].shape();
        const int a = check_shapes(d, is, in[2].shape());
        if (out[0].raw() != in[0].raw()) std::memcpy(out[0].raw(), in[0].raw(), in[0].nbytes());
        const Shape ds = nd::dense_strides(d);
        const std::vector<int64_t> idx = nd::int_values(in[1], "indices (input 1)");
        const int r = static_cast<int>(is.size());
        const int64_t dim = d[static_cast<size_t>(a)];
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T* upd = in[2].data<T>();
            T* o = out[0].data<T>();
            std::vector<int64_t> pos(static_cast<size_t>(r), 0);
            int64_t base = 0;
            for (size_t t = 0; t < idx.size(); ++t) {
                int64_t i = idx[t];
                check(i >= -dim && i < dim, "index ", i, " is out of range for axis ", a, " of size ", dim);
                if (i < 0) i += dim;
                T& dst = o[base + i * ds[static_cast<size_t>(a)]];
                dst = combine(dst, upd[t], reduction_);
                for (int k = r - 1; k >= 0; --k) {
                    if (k != a) base += ds[static_cast<size_t>(k)];
                    if (++pos[static_cast<size_t>(k)] < is[static_cast<size_t>(k)]) break;
                    if (k != a) base -= ds[static_cast<size_t>(k)] * is[static_cast<size_t>(k)];
                    pos[static_cast<size_t>(k)] = 0;
                }
            }
        });
    }

private:
    int check_shapes(const Shape& d, const Shape& is, const Shape& us) const
    {
        check(!d.empty(), "data (input 0) must have rank >= 1");
        check(is == us, "indices ", shape_str(is), " and updates ", shape_str(us), " must have the same shape");
        check(d.size() == is.size(), "indices ", shape_str(is), " must have the rank of data ", shape_str(d));
        const int a = nd::normalize_axis(axis_, static_cast<int64_t>(d.size()), "axis (param 0)");
        for (size_t k = 0; k < d.size(); ++k)
            check(static_cast<int>(k) == a || is[k] <= d[k], "indices ", shape_str(is), " exceed data ", shape_str(d),
                  " on axis ", k);
        return a;
    }
    int axis_ = 0;
    int reduction_ = 0;
};

} // namespace

std::unique_ptr<Op> make_nd_scatter_elements() { return std::make_unique<ScatterElements>(); }

} // namespace kestrel
