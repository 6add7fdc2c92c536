// Softmax (ncnn params): 0=axis (outermost first, negative counts from the
// end), 1=fixbug0. y = exp(x - max) / sum(exp(x - max)) along the axis.
//
// Like ncnn, params with fixbug0=0 and axis != 0 are refused: they come from
// converters that predate ncnn's fix of 3-D axis handling, and running them
// would silently give other results than the model's author saw.
// A rank-1 input is always normalized as a whole, whatever the axis (as ncnn).
// Any rank is accepted (ncnn: 1-4); the axis must exist for rank >= 2 (ncnn
// silently leaves the data unchanged for an axis it does not handle).
#include <algorithm>
#include <cfloat>

#include "kernels/exp_activations.h"
#include "ops/registry.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// Lanes of the axis processed per parallel work item when the axis is not innermost.
constexpr int64_t kLaneChunk = 256;

class Softmax : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, 0);
        const int fixbug0 = pd.get_int(1, 0);
        check(!(fixbug0 == 0 && axis_ != 0), "axis (param 0) ", axis_,
              " with fixbug0 (param 1) 0 is an old, buggy ncnn form that ncnn refuses too; regenerate the param (1=1)");
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        expect_f32(in[0]);
        check(!in[0].shape.empty(), "expects a tensor of rank >= 1, got a scalar");
        resolve_axis(in[0].shape);
        out[0] = TensorDesc();
        out[0].shape = in[0].shape;
        out[0].dtype = DType::F32;
    }

    bool supports_inplace() const override { return true; }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& s = in[0].shape();
        const int axis = resolve_axis(s);
        int64_t outer = 1, inner = 1;
        for (int i = 0; i < axis; ++i) outer *= s[i];
        for (size_t i = static_cast<size_t>(axis) + 1; i < s.size(); ++i) inner *= s[i];
        const int64_t n = s[axis];
        if (n == 0 || outer == 0 || inner == 0) return;
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();

        if (inner == 1) {
            ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
                for (int64_t o = begin; o < end; ++o) softmax_contiguous(x + o * n, y + o * n, n);
            });
            return;
        }
        // Axis with a stride: work on up to kLaneChunk neighbouring lanes at
        // once so the inner loops stay contiguous.
        const int64_t chunks = (inner + kLaneChunk - 1) / kLaneChunk;
        const ExpActivationKernel& exp_kernel = exp_activation_kernel();
        ctx.parallel_for(outer * chunks, [&](int64_t begin, int64_t end) {
            std::vector<float> mx(static_cast<size_t>(kLaneChunk)), sum(static_cast<size_t>(kLaneChunk));
            for (int64_t item = begin; item < end; ++item) {
                const int64_t o = item / chunks, c = item % chunks;
                const int64_t i0 = c * kLaneChunk, len = std::min(kLaneChunk, inner - i0);
                const float* xb = x + o * n * inner + i0;
                float* yb = y + o * n * inner + i0;
                std::fill(mx.begin(), mx.begin() + len, -FLT_MAX);
                std::fill(sum.begin(), sum.begin() + len, 0.f);
                for (int64_t k = 0; k < n; ++k) {
                    const float* xr = xb + k * inner;
                    for (int64_t i = 0; i < len; ++i) mx[i] = std::max(mx[i], xr[i]);
                }
                for (int64_t k = 0; k < n; ++k) {
                    const float* xr = xb + k * inner;
                    float* yr = yb + k * inner;
                    for (int64_t i = 0; i < len; ++i) yr[i] = xr[i] - mx[i];
                    exp_kernel.map(ExpActivation::Exp, yr, yr, len);
                    for (int64_t i = 0; i < len; ++i) sum[i] += yr[i];
                }
                for (int64_t k = 0; k < n; ++k) {
                    float* yr = yb + k * inner;
                    for (int64_t i = 0; i < len; ++i) yr[i] /= sum[i];
                }
            }
        });
    }

private:
    // y may alias x: every x[i] is read before y[i] is written, and never after.
    static void softmax_contiguous(const float* x, float* y, int64_t n)
    {
        float mx = -FLT_MAX;
        for (int64_t i = 0; i < n; ++i) mx = std::max(mx, x[i]);
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] - mx;
        exp_activation_kernel().map(ExpActivation::Exp, y, y, n);
        float sum = 0.f;
        for (int64_t i = 0; i < n; ++i) sum += y[i];
        for (int64_t i = 0; i < n; ++i) y[i] /= sum;
    }

    int resolve_axis(const Shape& s) const
    {
        const int rank = static_cast<int>(s.size());
        if (rank == 1) return 0; // ncnn: a 1-D blob is normalized whole for any axis
        const int a = axis_ < 0 ? axis_ + rank : axis_;
        check(a >= 0 && a < rank, "axis (param 0) ", axis_, " is out of range for rank ", rank, " input ",
              shape_str(s));
        return a;
    }

    int axis_ = 0;
};

} // namespace

std::unique_ptr<Op> make_softmax() { return std::make_unique<Softmax>(); }

} // namespace kestrel
