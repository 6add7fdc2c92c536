// Reduction: folds input 0 over some of its axes with one of the operations
//   0 SUM, 1 ASUM (sum |x|), 2 SUMSQ, 3 MEAN, 4 MAX, 5 MIN, 6 PROD, 7 L1,
//   8 L2 (sqrt of the sum of squares), 9 LOGSUM (log of the sum),
//   10 LOGSUMEXP.
// The axes and the arithmetic come in two forms:
//   ncnn params   1=reduce_all (1), 2=coeff (1), 3=axes (int array, outermost
//                 first, negative from the end), 4=keepdims (0), 5=fixbug0
//                 (must be 1 when axes are given, as ncnn requires). Float32
//                 only. The result is multiplied by coeff (MEAN: coeff /
//                 count); keepdims=0 drops the reduced axes and gives [1] when
//                 none remain. As ncnn: reduce_all=1 ignores axes; a rank-1
//                 input is always reduced whole; MAX/MIN start from
//                 -FLT_MAX/FLT_MAX; L2 flushes sums below FLT_MIN to 0; the
//                 final steps (coeff, sqrt, log) are in float.
//   axes input    21=1 (ONNX's Reduce*): input 1 (optional) the axes (1-D
//                 integers, negative from the end); 4=keepdims (default 1;
//                 without it, a full reduction gives a scalar);
//                 22=noop_with_empty_axes (0): no axes pass the input through,
//                 otherwise they reduce every axis; 20=dynamic=1 accepts axes
//                 known only at run time. Any float or integer dtype: integers
//                 are reduced exactly in 64 bits (sums and products wrap like
//                 the type; MEAN truncates toward zero; L2, LOGSUM, LOGSUMEXP
//                 go through double), floats in double; the output has the
//                 input's dtype.
// Both forms accumulate sums and products in double, visiting each group's
// elements in row-major order (common/strided_walker.h), so results never
// depend on the thread count; LOGSUMEXP subtracts the maximum first (ncnn
// overflows to inf above ~88). Differences from ncnn: reduce_all=0 with no axes
// on rank >= 2 is an error (ncnn leaves the output uninitialized), as are
// out-of-range axes (ncnn writes out of bounds).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"
#include "ops/common/strided_walker.h"
#include "ops/common/tensor_util.h"
#include "ops/reduce/reduction_plan.h"

namespace kestrel {

namespace {

enum ReduceOp { SUM, ASUM, SUMSQ, MEAN, MAX, MIN, PROD, L1, L2, LOGSUM, LOGSUMEXP };

class Reduction : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        op_ = pd.get_int(0, SUM);
        check(op_ >= SUM && op_ <= LOGSUMEXP, "operation (param 0) must be 0..10, got ", op_);
        axes_input_ = pd.get_int(21, 0) == 1;
        const int keepdims = pd.get_int(4, axes_input_ ? 1 : 0);
        check(keepdims == 0 || keepdims == 1, "keepdims (param 4) must be 0 or 1, got ", keepdims);
        keepdims_ = keepdims == 1;
        if (axes_input_) {
            if (op_ == ASUM) op_ = L1;
            noop_with_empty_axes_ = pd.get_int(22, 0) != 0;
            dynamic_ = pd.get_int(20, 0) != 0;
            return;
        }
        const int reduce_all = pd.get_int(1, 1);
        check(reduce_all == 0 || reduce_all == 1, "reduce_all (param 1) must be 0 or 1, got ", reduce_all);
        reduce_all_ = reduce_all == 1;
        coeff_ = pd.get_float(2, 1.f);
        axes_ = pd.get_ints(3);
        const int fixbug0 = pd.get_int(5, 0);
        check(fixbug0 == 1 || axes_.empty(),
              "axes (param 3) with fixbug0 (param 5) 0 are an old ncnn form (axes counted with the batch) that ncnn "
              "refuses too; regenerate the param (5=1)");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, axes_input_ ? 2 : 1);
        expect_output_count(out, 1);
        const Shape& s = in[0].shape;
        if (!axes_input_) {
            expect_f32(in[0]);
            check(!s.empty(), "expects a tensor of rank >= 1, got a scalar");
            check(shape_numel(s) > 0, "cannot reduce an empty tensor ", shape_str(s));
            out[0] = TensorDesc(output_shape(s, ncnn_axes(s)), DType::F32);
            return;
        }
        check(dtype_is_float(in[0].dtype) || nd::is_integer_dtype(in[0].dtype),
              "input must be a float or integer tensor, got ", dtype_name(in[0].dtype));
        if (in.size() == 2) {
            check(in[1].shape.size() == 1, "axes (input 1) must be 1-D, got ", shape_str(in[1].shape));
            // Empty axes are known from the shape alone.
            if (!in[1].value.defined() && in[1].shape[0] != 0) {
                check(dynamic_, "axes (input 1) must be known while planning; convert with 20=dynamic=1 to accept "
                                "values known only at run time");
                out[0] = TensorDesc(s, in[0].dtype); // placeholder: forward() gives the true shape
                return;
            }
        }
        out[0] = TensorDesc(output_shape(s, input_axes(s, in.size() == 2 ? in[1].value : Tensor())), in[0].dtype);
    }

    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Tensor& x = in[0];
        const std::vector<bool> reduced =
            axes_input_ ? input_axes(x.shape(), in.size() == 2 ? in[1] : Tensor()) : ncnn_axes(x.shape());
        const Shape out_shape = output_shape(x.shape(), reduced);
        if (out[0].shape() != out_shape) out[0] = Tensor(out_shape, x.dtype()); // dynamic axes only
        if (noop_with_empty_axes_ && std::none_of(reduced.begin(), reduced.end(), [](bool r) { return r; })) {
            std::memcpy(out[0].raw(), x.raw(), x.nbytes()); // no axes: the input passes through
            return;
        }
        const nd::GroupWalk walk(x.shape(), reduced);
        if (!axes_input_) {
            // ncnn: the float path, then coeff (MEAN: coeff / count) in float.
            const float coeff = op_ == MEAN ? coeff_ / static_cast<float>(walk.group_size()) : coeff_;
            const float* src = x.data<float>();
            float* dst = out[0].data<float>();
            ctx.parallel_for(walk.groups(), [&](int64_t begin, int64_t end) {
                for (int64_t g = begin; g < end; ++g) {
                    const float v = ncnn_group(walk, g, src);
                    dst[g] = coeff != 1.f ? v * coeff : v;
                }
            });
            return;
        }
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

    bool plan(const std::vector<TensorDesc>& in, ReductionPlan& p) const
    {
        const Shape& s = in[0].shape;
        if (axes_input_ && in.size() == 2 && !in[1].value.defined() && in[1].shape[0] != 0) return false;
        p.op = op_;
        p.ncnn = !axes_input_;
        p.reduced = axes_input_ ? input_axes(s, in.size() == 2 ? in[1].value : Tensor()) : ncnn_axes(s);
        p.passthrough = noop_with_empty_axes_ && std::none_of(p.reduced.begin(), p.reduced.end(), [](bool r) { return r; });
        int64_t count = 1;
        for (size_t k = 0; k < s.size(); ++k)
            if (p.reduced[k]) count *= s[k];
        p.coeff = !axes_input_ && op_ == MEAN ? coeff_ / static_cast<float>(count) : axes_input_ ? 1.f : coeff_;
        return true;
    }

private:
    // ncnn's axes: reduce_all, a rank-1 input whole, or the listed axes.
    std::vector<bool> ncnn_axes(const Shape& s) const
    {
        const int rank = static_cast<int>(s.size());
        std::vector<bool> red(s.size(), reduce_all_);
        if (reduce_all_) return red;
        if (rank == 1) { // ncnn reduces a 1-D blob whole whatever the axes
            red[0] = true;
            return red;
        }
        for (int a : axes_) {
            const int p = a < 0 ? a + rank : a;
            check(p >= 0 && p < rank, "axis ", a, " in axes (param 3) is out of range for rank ", rank, " input ",
                  shape_str(s));
            red[p] = true;
        }
        check(std::count(red.begin(), red.end(), true) > 0,
              "reduce_all (param 1) is 0 but axes (param 3) name no axis to reduce");
        return red;
    }

    // ONNX's axes input; none reduce every axis unless noop_with_empty_axes.
    std::vector<bool> input_axes(const Shape& s, const Tensor& axes_value) const
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
        if (o.empty() && !axes_input_) o.push_back(1); // ncnn has no scalars
        return o;
    }

    // ncnn's float conventions (see the header).
    float ncnn_group(const nd::GroupWalk& walk, int64_t g, const float* x) const
    {
        auto fold = [&](auto init, auto combine) {
            auto a = init;
            walk.visit(g, [&](int64_t i) { a = combine(a, x[i]); });
            return a;
        };
        switch (op_) {
        case MAX: return fold(-FLT_MAX, [](float a, float v) { return std::max(a, v); });
        case MIN: return fold(FLT_MAX, [](float a, float v) { return std::min(a, v); });
        case PROD: return static_cast<float>(fold(1.0, [](double a, float v) { return a * v; }));
        case LOGSUMEXP: {
            const float m = fold(-INFINITY, [](float a, float v) { return std::max(a, v); });
            const float shift = std::isfinite(m) ? m : 0.f;
            const double sum = fold(0.0, [&](double a, float v) { return a + std::exp(static_cast<double>(v) - shift); });
            return static_cast<float>(std::log(sum) + shift);
        }
        case ASUM:
        case L1: return static_cast<float>(fold(0.0, [](double a, float v) { return a + std::fabs(v); }));
        case SUMSQ:
        case L2: {
            const float r = static_cast<float>(fold(0.0, [](double a, float v) { return a + static_cast<double>(v) * v; }));
            return op_ == L2 ? std::sqrt(r < FLT_MIN ? 0.f : r) : r;
        }
        default: break;
        }
        const float r = static_cast<float>(fold(0.0, [](double a, float v) { return a + v; }));
        return op_ == LOGSUM ? std::log(r) : r;
    }

    // ONNX's: integers exactly where the operation stays in the integers,
    // everything else in double.
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
    bool axes_input_ = false, keepdims_ = false;
    // ncnn's form
    bool reduce_all_ = true;
    float coeff_ = 1.f;
    std::vector<int> axes_;
    // the axes-input form
    bool noop_with_empty_axes_ = false, dynamic_ = false;
};

} // namespace

bool reduction_plan(const Op& op, const std::vector<TensorDesc>& in, ReductionPlan& plan)
{
    const auto* reduction = dynamic_cast<const Reduction*>(&op);
    return reduction != nullptr && reduction->plan(in, plan);
}

std::unique_ptr<Op> make_reduction() { return std::make_unique<Reduction>(); }

} // namespace kestrel
