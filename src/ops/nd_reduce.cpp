// ReduceND (our layer, ONNX Reduce* semantics): reduces input 0 (float16,
// bfloat16, float32 or float64) over the axes in input 1 (1-D integers,
// negative from the end; optional). Params:
//   0=operation: 0 SUM, 2 SUMSQ, 3 MEAN, 4 MAX, 5 MIN, 6 PROD, 7 L1, 8 L2,
//     9 LOGSUM, 10 LOGSUMEXP (the codes of the ncnn Reduction layer; its 1 ASUM
//     is L1 here)
//   1=keepdims (1): reduced axes stay as 1, else they are dropped (a full
//     reduction then gives a scalar)
//   2=noop_with_empty_axes (0): no axes (absent or empty) pass the input
//     through; otherwise no axes reduce every axis
//   20=dynamic (0): 1 accepts axes known only at run time (see nd_common.cpp)
// Accumulates in double; the output has the input's dtype.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/dtype_dispatch.h"
#include "ops/nd_common.h"
#include "ops/nd_walker.h"
#include "ops/op_util.h"

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
        check(dtype_is_float(in[0].dtype), "input must be a float tensor, got ", dtype_name(in[0].dtype));
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

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Tensor& x = in[0];
        const std::vector<bool> reduced = reduced_axes(x.shape(), in.size() == 2 ? in[1] : Tensor());
        const Shape out_shape = output_shape(x.shape(), reduced);
        if (out[0].shape() != out_shape) out[0] = Tensor(out_shape, x.dtype());
        if (std::none_of(reduced.begin(), reduced.end(), [](bool r) { return r; }) && noop_with_empty_axes_) {
            std::memcpy(out[0].raw(), x.raw(), x.nbytes()); // no axes: the input passes through
            return;
        }
        Shape kept = x.shape();
        for (size_t k = 0; k < kept.size(); ++k)
            if (reduced[k]) kept[k] = 1;
        const std::vector<double> result = reduce(nd::as_doubles(x), x.shape(), nd::broadcast_strides(x.shape(), kept),
                                                  static_cast<size_t>(shape_numel(kept)));
        visit_dtype(x.dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            std::transform(result.begin(), result.end(), out[0].data<T>(), [](double v) { return convert_value<T>(v); });
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

    // One walk over x per pass, accumulating into the output slot of each element.
    std::vector<double> reduce(const std::vector<double>& x, const Shape& shape, const Shape& out_strides,
                               size_t outputs) const
    {
        const double count = outputs ? static_cast<double>(x.size()) / static_cast<double>(outputs) : 1.0;
        auto fold = [&](double init, auto combine) {
            std::vector<double> acc(outputs, init);
            nd::Walker w(shape, {out_strides}, 0);
            for (size_t i = 0; i < x.size(); ++i, w.next()) {
                double& a = acc[static_cast<size_t>(w.offset(0))];
                a = combine(a, x[i], static_cast<size_t>(w.offset(0)));
            }
            return acc;
        };
        const double inf = std::numeric_limits<double>::infinity();
        switch (op_) {
        case MAX: return fold(-inf, [](double a, double v, size_t) { return std::max(a, v); });
        case MIN: return fold(inf, [](double a, double v, size_t) { return std::min(a, v); });
        case PROD: return fold(1.0, [](double a, double v, size_t) { return a * v; });
        case LOGSUMEXP: {
            // Shift by the maximum so large inputs do not overflow exp().
            std::vector<double> shift = fold(-inf, [](double a, double v, size_t) { return std::max(a, v); });
            for (double& m : shift) m = std::isfinite(m) ? m : 0.0;
            std::vector<double> r = fold(0.0, [&](double a, double v, size_t o) { return a + std::exp(v - shift[o]); });
            for (size_t o = 0; o < r.size(); ++o) r[o] = std::log(r[o]) + shift[o];
            return r;
        }
        default: break;
        }
        std::vector<double> r = fold(0.0, [&](double a, double v, size_t) {
            if (op_ == L1) return a + std::fabs(v);
            if (op_ == SUMSQ || op_ == L2) return a + v * v;
            return a + v;
        });
        for (double& v : r) {
            if (op_ == MEAN) v /= count;
            else if (op_ == L2) v = std::sqrt(v);
            else if (op_ == LOGSUM) v = std::log(v);
        }
        return r;
    }

    int op_ = SUM;
    bool keepdims_ = true, noop_with_empty_axes_ = false, dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_nd_reduce() { return std::make_unique<ReduceND>(); }

} // namespace kestrel
