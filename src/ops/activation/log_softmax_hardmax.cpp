// LogSoftmax and Hardmax (ONNX, opset 13 form) along one axis of a float
// tensor (float32/float64/float16/bfloat16). Param 0=axis (default -1;
// negative counts from the end).
//   LogSoftmax: y = x - max - log(sum(exp(x - max))) along the axis.
//   Hardmax:    1 at the first maximum of each lane along the axis, 0 elsewhere.
// The opset < 13 forms (the input coerced to 2-D at `axis`) are made by the
// importer around these layers (FlattenND before, ReshapeND back after).
// Lanes are computed in double, so float16/bfloat16 lose nothing in between.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

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
        const Shape& d = in[0].shape();
        const size_t a = static_cast<size_t>(nd::normalize_axis(axis_, in[0].rank(), "axis (param 0)"));
        const int64_t n = d[a], inner = nd::dims_product(d, a + 1, d.size());
        const int64_t lanes = nd::dims_product(d, 0, a) * inner;
        if (n == 0 || lanes == 0) return;
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            const T* x = in[0].data<T>();
            T* y = out[0].data<T>();
            ctx.parallel_for(lanes, [&](int64_t begin, int64_t end) {
                std::vector<double> lane(static_cast<size_t>(n));
                for (int64_t l = begin; l < end; ++l) {
                    // Lane l starts at (outer index) * n * inner + (inner index), stride inner.
                    const int64_t start = (l / inner) * n * inner + l % inner;
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

std::unique_ptr<Op> make_nd_log_softmax() { return std::make_unique<AlongAxis<log_softmax_lane>>(); }
std::unique_ptr<Op> make_nd_hardmax() { return std::make_unique<AlongAxis<hardmax_lane>>(); }

} // namespace kestrel
