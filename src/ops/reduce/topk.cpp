// TopK (ONNX): the k largest (1=largest=1, default) or smallest (0) elements of
// input 0 (numeric) along 0=axis (default -1), with their int64 indices.
// Input 1 k: one integer in [0, axis size]. Ties keep the lower index first;
// NaN counts as larger than any number. Results are always sorted
// (2=sorted=0 allows any order, so sorted is valid too). Outputs: values, indices.
// Param 20=dynamic (see common/tensor_util.cpp): k may be known only at run time.
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"
#include "ops/reduce/top_k.h"

namespace kestrel {

namespace {

class TopK : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, -1);
        largest_ = pd.get_int(1, 1) != 0;
        dynamic_ = pd.get_int(20, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 2, 2);
        check(out.size() == 1 || out.size() == 2, "expects 1 or 2 outputs (values, indices), got ", out.size());
        check(in[0].dtype != DType::Bool, "input 0 must be numeric, got bool");
        check(shape_numel(in[1].shape) == 1, "k (input 1) must hold one value, got shape ", shape_str(in[1].shape));
        const Shape& d = in[0].shape;
        const int a = nd::normalize_axis(axis_, static_cast<int64_t>(d.size()), "axis (param 0)");
        Shape s = d;
        if (!in[1].value.defined() && dynamic_)
            s[static_cast<size_t>(a)] = d[static_cast<size_t>(a)]; // upper bound; forward() gives the real k
        else
            s[static_cast<size_t>(a)] = k_of(nd::known_value(in[1], "k (input 1)"), d[static_cast<size_t>(a)]);
        out[0] = TensorDesc(s, in[0].dtype);
        if (out.size() == 2) out[1] = TensorDesc(s, DType::I64);
    }
    bool dynamic_output_shape() const override { return dynamic_; }
    bool output_shapes_known(const std::vector<TensorDesc>& in) const override { return nd::values_known(in, 1); }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        const Shape& d = in[0].shape();
        const int a = nd::normalize_axis(axis_, in[0].rank(), "axis (param 0)");
        const int64_t n = d[static_cast<size_t>(a)];
        const int64_t k = k_of(in[1], n);
        Shape s = d;
        s[static_cast<size_t>(a)] = k;
        if (out[0].shape() != s) out[0] = Tensor(s, in[0].dtype());
        if (out.size() == 2 && out[1].shape() != s) out[1] = Tensor(s, DType::I64);
        const int64_t outer = nd::dims_product(d, 0, static_cast<size_t>(a));
        const int64_t inner = nd::dims_product(d, static_cast<size_t>(a) + 1, d.size());
        if (k == 0) return;
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            using V = std::conditional_t<std::is_arithmetic_v<T> && !std::is_same_v<T, bool>, T, float>; // bool: rejected in infer()
            const T* x = in[0].data<T>();
            T* vals = out[0].data<T>();
            int64_t* idx = out.size() == 2 ? out[1].data<int64_t>() : nullptr;
            ctx.parallel_for(outer * inner, [&](int64_t t0, int64_t t1) {
                std::vector<int64_t> order(static_cast<size_t>(n));
                std::vector<V> row(static_cast<size_t>(n));
                for (int64_t t = t0; t < t1; ++t) {
                    const int64_t o = t / inner, q = t % inner;
                    for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = convert_value<V>(x[(o * n + j) * inner + q]);
                    select_top_k(row.data(), n, k, largest_, false, order.data());
                    for (int64_t j = 0; j < k; ++j) {
                        const int64_t src = order[static_cast<size_t>(j)];
                        const int64_t at = (o * k + j) * inner + q;
                        vals[at] = x[(o * n + src) * inner + q];
                        if (idx) idx[at] = src;
                    }
                }
            });
        });
    }

private:
    static int64_t k_of(const Tensor& t, int64_t n)
    {
        const int64_t k = nd::int_scalar(t, "k (input 1)");
        check(k >= 0 && k <= n, "k (input 1) = ", k, " must be in [0, ", n, "] (the axis size)");
        return k;
    }
    int axis_ = -1;
    bool largest_ = true;
    bool dynamic_ = false;
};

} // namespace

std::unique_ptr<Op> make_topk() { return std::make_unique<TopK>(); }

} // namespace kestrel
