// CumSum (ONNX): running sums of input 0 (numeric) along the axis given by
// input 1 (one integer; negative from the end). Params 0=exclusive (the sum of
// the elements before, not including, each one), 1=reverse (sum from the end).
// float16/bfloat16 accumulate in float.
// CumulativeSum (ncnn): the same running sums of its one float32 input along
// 0=axis (outermost first, negative from the end; rank 1 ignores it, as ncnn).
#include <algorithm>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class CumSum : public Op {
public:
    explicit CumSum(bool ncnn) : ncnn_(ncnn) {}

    void load_param(const ParamDict& pd) override
    {
        if (ncnn_) {
            ncnn_axis_ = pd.get_int(0, 0);
            return;
        }
        exclusive_ = pd.get_int(0, 0) != 0;
        reverse_ = pd.get_int(1, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        if (ncnn_) {
            expect_input_count(in, 1, 1);
            expect_output_count(out, 1);
            expect_f32(in[0]);
            ncnn_dims(in[0].shape);
            ncnn_axis(in[0].shape);
            out[0] = in[0];
            return;
        }
        expect_input_count(in, 2, 2);
        expect_output_count(out, 1);
        check(in[0].dtype != DType::Bool, "input 0 must be numeric, got bool");
        check(shape_numel(in[1].shape) == 1, "axis (input 1) must hold one value, got shape ", shape_str(in[1].shape));
        if (in[1].value.defined())
            nd::normalize_axis(nd::int_scalar(in[1].value, "axis (input 1)"), static_cast<int64_t>(in[0].shape.size()),
                               "axis (input 1)");
        out[0] = TensorDesc(in[0].shape, in[0].dtype);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& d = in[0].shape();
        const int a = ncnn_ ? ncnn_axis(d)
                            : nd::normalize_axis(nd::int_scalar(in[1], "axis (input 1)"),
                                                 std::max<int64_t>(1, static_cast<int64_t>(d.size())), "axis (input 1)");
        const int64_t outer = nd::dims_product(d, 0, static_cast<size_t>(a));
        const int64_t n = d.empty() ? 1 : d[static_cast<size_t>(a)];
        const int64_t inner = nd::dims_product(d, static_cast<size_t>(a) + 1, d.size());
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            if constexpr (!std::is_same_v<T, bool>) {
                using Acc = std::conditional_t<std::is_arithmetic_v<T>, T, float>;
                const T* x = in[0].data<T>();
                T* y = out[0].data<T>();
                for (int64_t o = 0; o < outer; ++o)
                    for (int64_t q = 0; q < inner; ++q) {
                        Acc sum = Acc(0);
                        for (int64_t t = 0; t < n; ++t) {
                            const int64_t j = reverse_ ? n - 1 - t : t;
                            const int64_t at = (o * n + j) * inner + q;
                            const Acc v = convert_value<Acc>(x[at]);
                            if (exclusive_) {
                                y[at] = convert_value<T>(sum);
                                sum = static_cast<Acc>(sum + v);
                            } else {
                                sum = static_cast<Acc>(sum + v);
                                y[at] = convert_value<T>(sum);
                            }
                        }
                    }
            }
        });
    }

private:
    int ncnn_axis(const Shape& d) const
    {
        return d.size() == 1 ? 0 : nd::normalize_axis(ncnn_axis_, static_cast<int64_t>(d.size()), "axis (param 0)");
    }

    bool ncnn_;
    int ncnn_axis_ = 0;
    bool exclusive_ = false, reverse_ = false;
};

} // namespace

std::unique_ptr<Op> make_cumsum() { return std::make_unique<CumSum>(false); }
std::unique_ptr<Op> make_cumulative_sum() { return std::make_unique<CumSum>(true); }

} // namespace kestrel
