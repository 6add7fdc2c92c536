// Reduction (ncnn params): 0=operation, 1=reduce_all (1), 2=coeff (1),
// 3=axes (int array, outermost first, negative from the end), 4=keepdims (0),
// 5=fixbug0 (must be 1 when axes are given, as ncnn requires).
//
// operation: 0 SUM, 1 ASUM (sum |x|), 2 SUMSQ, 3 MEAN, 4 MAX, 5 MIN, 6 PROD,
// 7 L1, 8 L2 (sqrt of the sum of squares), 9 LogSum (log of the sum),
// 10 LogSumExp. The result is multiplied by coeff (MEAN: coeff / count).
// keepdims=0 drops the reduced axes; when none remain the output is [1].
//
// As ncnn: reduce_all=1 ignores axes; a rank-1 input is always reduced whole;
// MAX/MIN start from -FLT_MAX/FLT_MAX; L2 flushes sums below FLT_MIN to 0.
// Differences: sums are accumulated in double; LogSumExp subtracts the
// maximum first (ncnn overflows to inf for inputs above ~88); any rank works;
// reduce_all=0 with no axes on rank >= 2 is an error (ncnn leaves the output
// uninitialized); out-of-range axes are errors (ncnn writes out of bounds).
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

enum ReduceOp { SUM, ASUM, SUMSQ, MEAN, MAX, MIN, PROD, L1, L2, LOGSUM, LOGSUMEXP };

struct Dim {
    int64_t size, stride;
};

class Reduction : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        op_ = pd.get_int(0, 0);
        check(op_ >= SUM && op_ <= LOGSUMEXP, "operation (param 0) must be 0..10, got ", op_);
        const int reduce_all = pd.get_int(1, 1);
        check(reduce_all == 0 || reduce_all == 1, "reduce_all (param 1) must be 0 or 1, got ", reduce_all);
        reduce_all_ = reduce_all == 1;
        coeff_ = pd.get_float(2, 1.f);
        axes_ = pd.get_ints(3);
        const int keepdims = pd.get_int(4, 0);
        check(keepdims == 0 || keepdims == 1, "keepdims (param 4) must be 0 or 1, got ", keepdims);
        keepdims_ = keepdims == 1;
        const int fixbug0 = pd.get_int(5, 0);
        check(fixbug0 == 1 || axes_.empty(),
              "axes (param 3) with fixbug0 (param 5) 0 are an old ncnn form (axes counted with the batch) that ncnn "
              "refuses too; regenerate the param (5=1)");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        const Shape& s = in[0].shape;
        check(!s.empty(), "expects a tensor of rank >= 1, got a scalar");
        check(shape_numel(s) > 0, "cannot reduce an empty tensor ", shape_str(s));
        const std::vector<bool> red = reduced_axes(s);
        out[0] = TensorDesc();
        out[0].shape = output_shape(s, red);
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s = in[0].shape();
        const std::vector<bool> red = reduced_axes(s);
        std::vector<Dim> kept, reduced;
        int64_t stride = 1;
        std::vector<int64_t> strides(s.size());
        for (size_t i = s.size(); i-- > 0;) {
            strides[i] = stride;
            stride *= s[i];
        }
        int64_t count = 1;
        for (size_t i = 0; i < s.size(); ++i) {
            (red[i] ? reduced : kept).push_back(Dim{s[i], strides[i]});
            if (red[i]) count *= s[i];
        }
        float coeff = coeff_;
        if (op_ == MEAN) coeff = coeff_ / static_cast<float>(count);

        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();
        const int64_t outputs = out[0].numel();
        ctx.parallel_for(outputs, [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
                int64_t base = 0, rest = o;
                for (size_t k = kept.size(); k-- > 0;) {
                    base += (rest % kept[k].size) * kept[k].stride;
                    rest /= kept[k].size;
                }
                float v = reduce_one(x + base, reduced);
                if (coeff != 1.f) v *= coeff;
                y[o] = v;
            }
        });
    }

private:
    // Calls f(value) for every element of the reduced sub-block at p.
    template <class F>
    static void visit(const float* p, const std::vector<Dim>& dims, size_t level, F& f)
    {
        if (level == dims.size()) {
            f(*p);
            return;
        }
        const Dim& d = dims[level];
        if (level + 1 == dims.size()) {
            for (int64_t i = 0; i < d.size; ++i) f(p[i * d.stride]);
            return;
        }
        for (int64_t i = 0; i < d.size; ++i) visit(p + i * d.stride, dims, level + 1, f);
    }

    float reduce_one(const float* p, const std::vector<Dim>& dims) const
    {
        switch (op_) {
        case MAX: {
            float m = -FLT_MAX;
            auto f = [&](float v) { m = std::max(m, v); };
            visit(p, dims, 0, f);
            return m;
        }
        case MIN: {
            float m = FLT_MAX;
            auto f = [&](float v) { m = std::min(m, v); };
            visit(p, dims, 0, f);
            return m;
        }
        case PROD: {
            double r = 1;
            auto f = [&](float v) { r *= v; };
            visit(p, dims, 0, f);
            return static_cast<float>(r);
        }
        case LOGSUMEXP: {
            float m = -INFINITY;
            auto fm = [&](float v) { m = std::max(m, v); };
            visit(p, dims, 0, fm);
            const float shift = std::isfinite(m) ? m : 0.f;
            double sum = 0;
            auto f = [&](float v) { sum += std::exp(static_cast<double>(v) - shift); };
            visit(p, dims, 0, f);
            return static_cast<float>(std::log(sum) + shift);
        }
        default: break;
        }
        double sum = 0;
        if (op_ == ASUM || op_ == L1) {
            auto f = [&](float v) { sum += std::fabs(v); };
            visit(p, dims, 0, f);
        } else if (op_ == SUMSQ || op_ == L2) {
            auto f = [&](float v) { sum += static_cast<double>(v) * v; };
            visit(p, dims, 0, f);
        } else {
            auto f = [&](float v) { sum += v; };
            visit(p, dims, 0, f);
        }
        const float r = static_cast<float>(sum);
        if (op_ == L2) return std::sqrt(r < FLT_MIN ? 0.f : r);
        if (op_ == LOGSUM) return std::log(r);
        return r;
    }

    std::vector<bool> reduced_axes(const Shape& s) const
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

    Shape output_shape(const Shape& s, const std::vector<bool>& red) const
    {
        Shape o;
        for (size_t i = 0; i < s.size(); ++i) {
            if (!red[i]) o.push_back(s[i]);
            else if (keepdims_) o.push_back(1);
        }
        if (o.empty()) o.push_back(1);
        return o;
    }

    int op_ = SUM;
    bool reduce_all_ = true, keepdims_ = false;
    float coeff_ = 1.f;
    std::vector<int> axes_;
};

} // namespace

std::unique_ptr<Op> make_reduction() { return std::make_unique<Reduction>(); }

} // namespace kestrel
