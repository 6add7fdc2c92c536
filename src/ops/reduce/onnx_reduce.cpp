// ReduceND (our layer, ONNX Reduce* semantics): reduces input 0 (any float or
// integer dtype) over the axes in input 1 (1-D integers,
// negative from the end; optional). Params:
//   0=operation: 0 SUM, 2 SUMSQ, 3 MEAN, 4 MAX, 5 MIN, 6 PROD, 7 L1, 8 L2,
//     9 LOGSUM, 10 LOGSUMEXP (the codes of the ncnn Reduction layer; its 1 ASUM
//     is L1 here)
//   1=keepdims (1): reduced axes stay as 1, else they are dropped (a full
//     reduction then gives a scalar)
//   2=noop_with_empty_axes (0): no axes (absent or empty) pass the input
//     through; otherwise no axes reduce every axis
//   20=dynamic (0): 1 accepts axes known only at run time (see nd_common.cpp)
// Integer inputs (any width) are reduced exactly in 64 bits (MEAN truncates
// toward zero; L2, LOGSUM, LOGSUMEXP go through double); floats accumulate in
// double. The output has the input's dtype.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/strided_walker.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum ReduceOp { SUM = 0, ASUM = 1, SUMSQ = 2, MEAN = 3, MAX = 4, MIN = 5, PROD = 6, L1 = 7, L2 = 8, LOGSUM = 9, LOGSUMEXP = 10 };

class ReduceND : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        op_ = pd.get_int(0, SUM);
        check(op_ >= SUM && op_ <= LOGSUMEXP, "operation (param 0) must be 0..10, got ", op_);
        if (op_ == ASUM) op_ = L1;
        keepdims_ = pd.get_int(1, 1) != 0;
        noop_with_empty_axes_ = pd.get_int(2, 0) != 0;
        dynamic_ = pd.get_int(20, 0) != 0;
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 2);
        expect_output_count(out, 1);
        check(dtype_is_float(in[0].dtype) || nd::is_integer_dtype(in[0].dtype),
              "input must be a float or integer tensor, got ", dtype_name(in[0].dtype));
        if (in.size() == 2) {
            check(in[1].shape.size() == 1, "axes (input 1) must be 1-D, got ", shape_str(in[1].shape));
            // Empty axes are known from the shape alone.
            if (!in[1].value.defined() && in[1].shape[0] != 0) {
                check(dynamic_, "axes (input 1) must be known while planning; convert with 20=dynamic=1 to accept "
                                "values known only at run time");
                out[0] = TensorDesc(in[0].shape, in[0].dtype); // placeholder: forward() gives the true shape
                return;
            }
        }
        const std::vector<bool> reduced = reduced_axes(in[0].shape, in.size() == 2 ? in[1].value : Tensor());
        out[0] = TensorDesc(output_shape(in[0].shape, reduced), in[0].dtype);
    }

    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Tensor& x = in[0];
        const std::vector<bool> reduced = reduced_axes(x.shape(), in.size() == 2 ? in[1] : Tensor());
        const Shape out_shape = output_shape(x.shape(), reduced);
        if (out[0].shape() != out_shape) out[0] = Tensor(out_shape, x.dtype());
        if (std::none_of(reduced.begin(), reduced.end(), [](bool r) { return r; }) && noop_with_empty_axes_) {
            std::memcpy(out[0].raw(), x.raw(), x.nbytes()); // no axes: the input passes through
            return;
        }
        const nd::GroupWalk walk(x.shape(), reduced);
        visit_dtype(x.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (!std::is_same_v<T, bool>) {
                const T* src = x.data<T>();
                T* dst = out[0].data<T>();
                ctx.parallel_for(walk.groups(), [&](int64_t begin, int64_t end) {
                    for (int64_t g = begin; g < end; ++g) dst[g] = reduce_group(walk, g, src);
                });
            }
        });
    }

private:
    // Which axes are reduced; none when the op is a no-op.
    std::vector<bool> reduced_axes(const Shape& s, const Tensor& axes_value) const
    {
        const int64_t rank = static_cast<int64_t>(s.size());
        const std::vector<int64_t> axes =
            axes_value.defined() ? nd::int_values(axes_value, "axes (input 1)") : std::vector<int64_t>();
        std::vector<bool> reduced(s.size(), axes.empty() && !noop_with_empty_axes_);
        for (int64_t a : axes) reduced[static_cast<size_t>(nd::normalize_axis(a, rank, "axis"))] = true;
        return reduced;
    }

    Shape output_shape(const Shape& s, const std::vector<bool>& reduced) const
    {
        Shape o;
        for (size_t k = 0; k < s.size(); ++k) {
            if (!reduced[k]) o.push_back(s[k]);
            else if (keepdims_) o.push_back(1);
        }
        return o;
    }

    // Folds group g of x: integers exactly where the operation stays in the
    // integers, everything else in double.
    template <class T> T reduce_group(const nd::GroupWalk& walk, int64_t g, const T* x) const
    {
        if constexpr (std::is_integral_v<T>)
            if (op_ != L2 && op_ != LOGSUM && op_ != LOGSUMEXP) return integer_group(walk, g, x);
        return convert_value<T>(double_group(walk, g, x));
    }

    // Sums, products and extremes of integers in 64 bits; sums and products
    // wrap around (unsigned arithmetic) as the element type would. MEAN
    // truncates toward zero, as ONNX's reference (mean, then astype) does.
    template <class T> T integer_group(const nd::GroupWalk& walk, int64_t g, const T* x) const
    {
        using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
        Wide lo = std::numeric_limits<T>::max(), hi = std::numeric_limits<T>::lowest();
        uint64_t sum = 0, product = 1, abs_sum = 0, squares = 0;
        walk.visit(g, [&](int64_t i) {
            const Wide v = static_cast<Wide>(x[i]);
            const uint64_t u = static_cast<uint64_t>(v);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            sum += u;
            product *= u;
            squares += u * u;
            abs_sum += v < 0 ? 0 - u : u;
        });
        switch (op_) {
        case MAX: return static_cast<T>(hi);
        case MIN: return static_cast<T>(lo);
        case PROD: return static_cast<T>(product);
        case L1: return static_cast<T>(abs_sum);
        case SUMSQ: return static_cast<T>(squares);
        case MEAN:
            if (walk.group_size() == 0) return T(0);
            return static_cast<T>(static_cast<Wide>(sum) / static_cast<Wide>(walk.group_size()));
        default: return static_cast<T>(sum);
        }
    }

    // Folds group g of x in double.
    template <class T> double double_group(const nd::GroupWalk& walk, int64_t g, const T* x) const
    {
        auto fold = [&](double init, auto combine) {
            double a = init;
            walk.visit(g, [&](int64_t i) { a = combine(a, to_double(x[i])); });
            return a;
        };
        const double inf = std::numeric_limits<double>::infinity();
        switch (op_) {
        case MAX: return fold(-inf, [](double a, double v) { return std::max(a, v); });
        case MIN: return fold(inf, [](double a, double v) { return std::min(a, v); });
        case PROD: return fold(1.0, [](double a, double v) { return a * v; });
        case LOGSUMEXP: {
            // Shift by the maximum so large inputs do not overflow exp().
            double shift = fold(-inf, [](double a, double v) { return std::max(a, v); });
            if (!std::isfinite(shift)) shift = 0.0;
            return std::log(fold(0.0, [&](double a, double v) { return a + std::exp(v - shift); })) + shift;
        }
        case L1: return fold(0.0, [](double a, double v) { return a + std::fabs(v); });
        case SUMSQ: return fold(0.0, [](double a, double v) { return a + v * v; });
        case L2: return std::sqrt(fold(0.0, [](double a, double v) { return a + v * v; }));
        default: break;
        }
        const double sum = fold(0.0, [](double a, double v) { return a + v; });
        if (op_ == MEAN) return sum / static_cast<double>(walk.group_size());
        if (op_ == LOGSUM) return std::log(sum);
        return sum;
    }

    int op_ = SUM;
    bool keepdims_ = true, noop_with_empty_axes_ = false, dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_nd_reduce() { return std::make_unique<ReduceND>(); }

} // namespace kestrel
