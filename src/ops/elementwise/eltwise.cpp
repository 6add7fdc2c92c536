// Eltwise: one value from N inputs, element by element. Two forms:
//   ncnn's   0=op_type (0 product, 1 sum weighted by 1=coeffs, 2 max) of N
//            float32 inputs of one shape.
//   typed    21=1 (ONNX's Sum, Max, Min, Mean): 0=op (1 sum, 2 max, 3 min,
//            4 mean) of 1 or more inputs of one dtype with numpy
//            broadcasting: sum, max, min over numeric types (max/min
//            propagate NaN), mean over float types (the sum, then divided by
//            the count); pairwise steps on the one broadcast engine
//            (typed_ops.h).
#include <algorithm>
#include <cstring>

#include "kernels/broadcast.h"
#include "ops/common/op_util.h"
#include "ops/elementwise/eltwise_plan.h"
#include "ops/elementwise/typed_ops.h"

namespace kestrel {

namespace {

enum EltwiseOp { kProd = 0, kSum = 1, kMax = 2, kMin = 3, kMean = 4 };

class Eltwise final : public Op {
public:
    BlockedLayouts blocked_layouts(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, bool) const override
    {
        return same_shape_elementwise(in, out);
    }
    void load_param(const ParamDict& pd) override
    {
        typed_ = pd.get_int(21, 0) == 1;
        op_ = pd.get_int(0, typed_ ? kSum : kProd);
        if (typed_) {
            check(op_ >= kSum && op_ <= kMean, "op (param 0) must be 1 (sum), 2 (max), 3 (min) or 4 (mean), got ", op_);
            return;
        }
        check(op_ >= kProd && op_ <= kMax, "op_type (param 0) must be 0 (prod), 1 (sum) or 2 (max), got ", op_);
        coeffs_ = pd.get_floats(1);
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1 << 12);
        expect_output_count(out, 1);
        if (typed_) {
            std::vector<Shape> shapes;
            for (size_t i = 0; i < in.size(); ++i) {
                check(in[i].dtype == in[0].dtype, "inputs must have one dtype, got ", dtype_name(in[0].dtype), " and ",
                      dtype_name(in[i].dtype), " (input ", i, ")");
                shapes.push_back(in[i].shape);
            }
            typed_ops::check_variadic_dtype(name(), last_step(), in[0].dtype);
            out[0] = TensorDesc(broadcast_numpy(shapes).out_shape, in[0].dtype);
            return;
        }
        for (const auto& d : in) {
            expect_f32(d);
            check(d.shape == in[0].shape, "inputs must have the same shape, got ", shape_str(in[0].shape), " and ",
                  shape_str(d.shape));
        }
        check(coeffs_.empty() || coeffs_.size() == in.size(), "has ", coeffs_.size(), " coefficients for ", in.size(),
              " inputs");
        out[0] = in[0];
    }

    // ncnn's form only: its inputs share the output's shape.
    bool supports_inplace() const override { return !typed_; }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        check(!in.empty(), "expects at least one input");
        if (!typed_) {
            forward_ncnn(in, out[0], ctx);
            return;
        }
        if (typed_ops::any_half(in) && in.size() > 1)
            typed_ops::run_widened(in, out.at(0), [&](const std::vector<Tensor>& w, Tensor& y) { forward_typed(w, y, ctx); });
        else
            forward_typed(in, out.at(0), ctx);
    }

    bool plan(const std::vector<TensorDesc>& in, EltwisePlan& p) const
    {
        using Step = EltwisePlan::Step;
        if (typed_)
            p.step = op_ == kSum ? Step::Sum : op_ == kMax ? Step::NanMax : op_ == kMin ? Step::NanMin : Step::Mean;
        else
            p.step = op_ == kProd ? Step::Product : op_ == kSum ? Step::Sum : Step::Max;
        p.coeffs.clear();
        for (size_t k = 0; k < in.size(); ++k) p.coeffs.push_back(typed_ ? 1.f : coeff(k));
        return true;
    }

private:
    // Blocks of values, each input in turn over the whole block (loops the
    // compiler vectorizes); every value takes ncnn's steps in input order. The
    // block is summed apart, so the output may share any input's buffer.
    void forward_ncnn(const std::vector<Tensor>& in, Tensor& out, const ExecContext& ctx) const
    {
        constexpr int64_t kBlock = 1024;
        const int64_t n = out.numel();
        float* y = out.data<float>();
        ctx.parallel_for((n + kBlock - 1) / kBlock, [&](int64_t begin, int64_t end) {
            float acc[kBlock];
            for (int64_t blk = begin; blk < end; ++blk) {
                const int64_t i0 = blk * kBlock, len = std::min(kBlock, n - i0);
                const float c0 = coeff(0);
                const float* x0 = in[0].data<float>() + i0;
                for (int64_t i = 0; i < len; ++i) acc[i] = c0 * x0[i];
                for (size_t k = 1; k < in.size(); ++k) {
                    const float* x = in[k].data<float>() + i0;
                    const float ck = coeff(k);
                    if (op_ == kProd)
                        for (int64_t i = 0; i < len; ++i) acc[i] *= x[i];
                    else if (op_ == kSum)
                        for (int64_t i = 0; i < len; ++i) acc[i] += ck * x[i];
                    else
                        for (int64_t i = 0; i < len; ++i) acc[i] = std::max(acc[i], x[i]);
                }
                std::copy(acc, acc + len, y + i0);
            }
        });
    }

    // out = in0 op in1, then out = out op in_k (out is read 1:1 and written in place).
    void forward_typed(const std::vector<Tensor>& inputs, Tensor& out, const ExecContext& ctx) const
    {
        const size_t n = inputs.size();
        std::vector<Shape> shapes;
        for (const Tensor& t : inputs) {
            check(t.dtype() == out.dtype(), "inputs must have the output's dtype");
            shapes.push_back(t.shape());
        }
        const Shape& os = out.shape();
        check(os == broadcast_numpy(shapes).out_shape, "output shape ", shape_str(os), " != broadcast shape ",
              shape_str(broadcast_numpy(shapes).out_shape));
        if (n == 1) { // the identity (output shape == input shape)
            std::memmove(out.raw(), inputs[0].raw(), out.nbytes());
            return;
        }
        const typed_ops::BinaryKernel step = typed_ops::variadic_kernel(out.dtype(), first_step());
        const typed_ops::BinaryKernel last = typed_ops::variadic_kernel(out.dtype(), last_step());
        check(step != nullptr && last != nullptr, name(), " does not support dtype ", dtype_name(out.dtype()));
        auto lift = [&](const Shape& s) {
            Shape r(os.size() - s.size(), 1);
            r.insert(r.end(), s.begin(), s.end());
            return r;
        };
        typed_ops::OpParams p;
        p.alpha = static_cast<double>(n); // the mean's divisor
        const ParallelRunner run(ctx);
        const BroadcastPlan first = make_broadcast_plan(os, {lift(shapes[0]), lift(shapes[1])}, {shapes[0], shapes[1]});
        (n == 2 ? last : step)(first, inputs[0].raw(), inputs[1].raw(), out.raw(), p, run);
        for (size_t k = 2; k < n; ++k) {
            const BroadcastPlan plan = make_broadcast_plan(os, {os, lift(shapes[k])}, {os, shapes[k]});
            (k + 1 == n ? last : step)(plan, out.raw(), inputs[k].raw(), out.raw(), p, run);
        }
    }

    float coeff(size_t k) const { return op_ == kSum && !coeffs_.empty() ? coeffs_[k] : 1.f; }

    const char* name() const
    {
        static const char* const names[] = {"Prod", "Sum", "Max", "Min", "Mean"};
        return names[op_];
    }
    int first_step() const
    {
        return op_ == kMax ? typed_ops::kStepMax : op_ == kMin ? typed_ops::kStepMin : typed_ops::kStepAdd;
    }
    int last_step() const { return op_ == kMean ? typed_ops::kStepAddDiv : first_step(); }

    bool typed_ = false;
    int op_ = kProd;
    std::vector<float> coeffs_;
};

} // namespace

bool eltwise_plan(const Op& op, const std::vector<TensorDesc>& in, EltwisePlan& plan)
{
    const auto* eltwise = dynamic_cast<const Eltwise*>(&op);
    return eltwise != nullptr && eltwise->plan(in, plan);
}

std::unique_ptr<Op> make_eltwise() { return std::make_unique<Eltwise>(); }

} // namespace kestrel
