// Det (ONNX): determinants of the square matrices in the last two axes of a
// float tensor (*, M, M) -> (*). Gaussian elimination with partial pivoting,
// in double; an empty (0 x 0) matrix has determinant 1.
#include <cmath>
#include <utility>
#include <vector>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// Determinant of the m x m row-major matrix `a` (destroyed).
double determinant(std::vector<double>& a, size_t m)
{
    double det = 1;
    for (size_t col = 0; col < m; ++col) {
        size_t pivot = col;
        for (size_t r = col + 1; r < m; ++r)
            if (std::fabs(a[r * m + col]) > std::fabs(a[pivot * m + col])) pivot = r;
        if (a[pivot * m + col] == 0) return 0;
        if (pivot != col) {
            for (size_t c = 0; c < m; ++c) std::swap(a[pivot * m + c], a[col * m + c]);
            det = -det;
        }
        det *= a[col * m + col];
        for (size_t r = col + 1; r < m; ++r) {
            const double f = a[r * m + col] / a[col * m + col];
            for (size_t c = col; c < m; ++c) a[r * m + c] -= f * a[col * m + c];
        }
    }
    return det;
}

class Det : public Op {
public:
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        const Shape& x = in[0].shape;
        check(dtype_is_float(in[0].dtype), "input must be a float tensor, got ", dtype_name(in[0].dtype));
        check(x.size() >= 2 && x[x.size() - 1] == x[x.size() - 2], "input must be (*, M, M), got shape ", shape_str(x));
        out[0] = TensorDesc(Shape(x.begin(), x.end() - 2), in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const size_t m = static_cast<size_t>(in[0].shape().back());
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T* x = in[0].data<T>();
            std::vector<double> a(m * m);
            for (int64_t i = 0; i < out[0].numel(); ++i) {
                for (size_t k = 0; k < a.size(); ++k) a[k] = to_double(x[static_cast<size_t>(i) * a.size() + k]);
                out[0].data<T>()[i] = convert_value<T>(determinant(a, m));
            }
        });
    }
};

} // namespace

std::unique_ptr<Op> make_det() { return std::make_unique<Det>(); }

} // namespace kestrel
