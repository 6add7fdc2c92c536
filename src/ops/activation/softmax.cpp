// The softmax family: functions of the lanes along one axis (outermost first,
// negative counts from the end), split into (outer, axis, inner) by one
// AxisLanes.
//
// Softmax (ncnn params): 0=axis, 1=fixbug0. y = exp(x - max) / sum(exp(x -
// max)) along the axis, float32, on the vector exp kernel.
//
// Like ncnn, params with fixbug0=0 and axis != 0 are refused: they come from
// converters that predate ncnn's fix of 3-D axis handling, and running them
// would silently give other results than the model's author saw.
// A rank-1 input is always normalized as a whole, whatever the axis (as ncnn).
// Any rank is accepted (ncnn: 1-4); the axis must exist for rank >= 2 (ncnn
// silently leaves the data unchanged for an axis it does not handle).
//
// LogSoftmax and Hardmax (ONNX, opset 13 form): 0=axis (default -1), any
// float dtype (float32/float64/float16/bfloat16), computed per lane in double
// so float16/bfloat16 lose nothing in between:
//   LogSoftmax: y = x - max - log(sum(exp(x - max))).
//   Hardmax:    1 at the first maximum of each lane, 0 elsewhere.
// The opset < 13 forms (the input coerced to 2-D at `axis`) are made by the
// importer around these layers (Flatten before, Reshape back after).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "core/dtype_dispatch.h"

#include "kernels/activations.h"
#include "kernels/softmax_row.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"
#include "ops/activation/softmax_lanes.h"

namespace kestrel {

namespace {

// Lanes of the axis processed per parallel work item when the axis is not innermost.
constexpr int64_t kLaneChunk = 256;

// A shape seen as (outer, n, inner) around an axis: lane l starts at
// (l / inner) * n * inner + l % inner, its values `inner` apart.
struct AxisLanes {
    int64_t outer = 1, n = 1, inner = 1;
    AxisLanes(const Shape& s, size_t axis)
        : outer(nd::dims_product(s, 0, axis)), n(s[axis]), inner(nd::dims_product(s, axis + 1, s.size()))
    {
    }
    int64_t lanes() const { return outer * inner; }
    int64_t start(int64_t lane) const { return (lane / inner) * n * inner + lane % inner; }
};

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
        const AxisLanes lanes(in[0].shape(), static_cast<size_t>(resolve_axis(in[0].shape())));
        const int64_t outer = lanes.outer, n = lanes.n, inner = lanes.inner;
        if (n == 0 || outer == 0 || inner == 0) return;
        const float* x = in[0].data<float>();
        float* y = out[0].data<float>();

        if (inner == 1) {
            ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
                for (int64_t o = begin; o < end; ++o) softmax_row(x + o * n, y + o * n, n);
            });
            return;
        }
        // Axis with a stride: work on up to kLaneChunk neighbouring lanes at
        // once so the inner loops stay contiguous.
        const int64_t chunks = (inner + kLaneChunk - 1) / kLaneChunk;
        const ActivationKernel& exp_kernel = activation_kernel();
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
                    exp_kernel.map_exp(ExpActivation::Exp, yr, yr, len);
                    for (int64_t i = 0; i < len; ++i) sum[i] += yr[i];
                }
                for (int64_t k = 0; k < n; ++k) {
                    float* yr = yb + k * inner;
                    for (int64_t i = 0; i < len; ++i) yr[i] /= sum[i];
                }
            }
        });
    }

    // softmax_lanes (softmax_lanes.h).
    void lanes_of(const Shape& s, int64_t& outer, int64_t& n, int64_t& inner) const
    {
        const AxisLanes lanes(s, static_cast<size_t>(resolve_axis(s)));
        outer = lanes.outer, n = lanes.n, inner = lanes.inner;
    }

private:
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

// Computes one lane (the values along the axis) in place.
using LaneFn = void (*)(std::vector<double>& lane);

void log_softmax_lane(std::vector<double>& lane)
{
    const double max = *std::max_element(lane.begin(), lane.end());
    double sum = 0;
    for (double v : lane) sum += std::exp(v - max);
    const double log_sum = std::log(sum);
    for (double& v : lane) v = v - max - log_sum;
}

void hardmax_lane(std::vector<double>& lane)
{
    // max_element returns the first of equal maxima, as ONNX asks.
    const size_t at = static_cast<size_t>(std::max_element(lane.begin(), lane.end()) - lane.begin());
    std::fill(lane.begin(), lane.end(), 0.0);
    lane[at] = 1.0;
}

template <LaneFn Lane>
class AlongAxis : public Op {
public:
    void load_param(const ParamDict& pd) override { axis_ = pd.get_int(0, -1); }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        check(dtype_is_float(in[0].dtype), "input must be a float tensor, got ", dtype_name(in[0].dtype));
        check(!in[0].shape.empty(), "input must have rank >= 1, got a scalar");
        nd::normalize_axis(axis_, static_cast<int64_t>(in[0].shape.size()), "axis (param 0)");
        out[0] = TensorDesc(in[0].shape, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const AxisLanes lanes(in[0].shape(), static_cast<size_t>(nd::normalize_axis(axis_, in[0].rank(), "axis (param 0)")));
        const int64_t n = lanes.n, inner = lanes.inner;
        if (n == 0 || lanes.lanes() == 0) return;
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T* x = in[0].data<T>();
            T* y = out[0].data<T>();
            ctx.parallel_for(lanes.lanes(), [&](int64_t begin, int64_t end) {
                std::vector<double> lane(static_cast<size_t>(n));
                for (int64_t l = begin; l < end; ++l) {
                    const int64_t start = lanes.start(l);
                    for (int64_t i = 0; i < n; ++i) lane[static_cast<size_t>(i)] = to_double(x[start + i * inner]);
                    Lane(lane);
                    for (int64_t i = 0; i < n; ++i) y[start + i * inner] = convert_value<T>(lane[static_cast<size_t>(i)]);
                }
            });
        });
    }

private:
    int axis_ = -1;
};

} // namespace

bool softmax_lanes(const Op& op, const Shape& in, int64_t& outer, int64_t& n, int64_t& inner)
{
    const auto* softmax = dynamic_cast<const Softmax*>(&op);
    if (softmax) softmax->lanes_of(in, outer, n, inner);
    return softmax != nullptr;
}

std::unique_ptr<Op> make_softmax() { return std::make_unique<Softmax>(); }
std::unique_ptr<Op> make_log_softmax() { return std::make_unique<AlongAxis<log_softmax_lane>>(); }
std::unique_ptr<Op> make_hardmax() { return std::make_unique<AlongAxis<hardmax_lane>>(); }

} // namespace kestrel
