// GatherElements (ONNX): out[i0..ik..] = data[i0..indices[i0..ik..]..] along
// 0=axis (default 0). Data any dtype; indices integers of data's rank, each
// dim no larger than data's (except along axis); the output has indices' shape.
#include <cstring>

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
        const Shape ds = nd::dense_strides(d);
        const std::vector<int64_t> idx = nd::int_values(in[1], "indices (input 1)");
        const size_t es = dtype_size(in[0].dtype());
        const uint8_t* src = static_cast<const uint8_t*>(in[0].raw());
        uint8_t* dst = static_cast<uint8_t*>(out[0].raw());
        const int r = static_cast<int>(is.size());
        const int64_t dim = d[static_cast<size_t>(a)];
        std::vector<int64_t> pos(static_cast<size_t>(r), 0);
        int64_t base = 0; // data offset of pos with 0 along the axis
        for (size_t t = 0; t < idx.size(); ++t) {
            int64_t i = idx[t];
            check(i >= -dim && i < dim, "index ", i, " is out of range for axis ", a, " of size ", dim);
            if (i < 0) i += dim;
            std::memcpy(dst + t * es, src + static_cast<size_t>(base + i * ds[static_cast<size_t>(a)]) * es, es);
            for (int k = r - 1; k >= 0; --k) {
                if (k != a) base += ds[static_cast<size_t>(k)];
                if (++pos[static_cast<size_t>(k)] < is[static_cast<size_t>(k)]) break;
                if (k != a) base -= ds[static_cast<size_t>(k)] * is[static_cast<size_t>(k)];
                pos[static_cast<size_t>(k)] = 0;
            }
        }
    }

private:
    int check_shapes(const Shape& d, const Shape& is) const
    {
        check(!d.empty(), "data (input 0) must have rank >= 1");
        check(d.size() == is.size(), "indices ", shape_str(is), " must have the rank of data ", shape_str(d));
        const int a = nd::normalize_axis(axis_, static_cast<int64_t>(d.size()), "axis (param 0)");
        for (size_t k = 0; k < d.size(); ++k)
            check(static_cast<int>(k) == a || is[k] <= d[k], "indices ", shape_str(is), " exceed data ", shape_str(d),
                  " on axis ", k);
        return a;
    }
    int axis_ = 0;
};

} // namespace

std::unique_ptr<Op> make_nd_gather_elements() { return std::make_unique<GatherElements>(); }

} // namespace kestrel
