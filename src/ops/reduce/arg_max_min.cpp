// ArgMax and ArgMin (ONNX's): int64 index of the largest / smallest element of
// input 0 (numeric) along an axis (default 0), with keepdims (default 1: the
// axis stays with size 1) and select_last_index (default 0: ties give the
// first index). NaN wins over any number (as in numpy).
// ArgMin's params: 0=axis 1=keepdims 2=select_last_index. ArgMax shares its
// name with ncnn's layer (0=out_max_val 1=topk over the flattened input,
// not read yet: refused clearly), so its ONNX form is 20=1 with 21=axis
// 22=keepdims 23=select_last_index.
#include <cmath>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

class ArgReduce : public Op {
public:
    explicit ArgReduce(bool max) : max_(max) {}
    void load_param(const ParamDict& pd) override
    {
        const int first = max_ ? 21 : 0; // ArgMax's ONNX form keeps off ncnn's ids
        if (max_)
            check(pd.get_int(20, 0) == 1,
                  "ncnn's ArgMax params (0=out_max_val, 1=topk) are not supported yet; the ONNX form needs 20=1");
        axis_ = pd.get_int(first, 0);
        keepdims_ = pd.get_int(first + 1, 1) != 0;
        last_ = pd.get_int(first + 2, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        check(in[0].dtype != DType::Bool, "input must be numeric, got bool");
        const Shape& d = in[0].shape;
        const int a = nd::normalize_axis(axis_, static_cast<int64_t>(d.size()), axis_name());
        check(d[static_cast<size_t>(a)] > 0, "cannot reduce the empty axis ", a, " of ", shape_str(d));
        Shape s = d;
        if (keepdims_)
            s[static_cast<size_t>(a)] = 1;
        else
            s.erase(s.begin() + a);
        out[0] = TensorDesc(s, DType::I64);
    }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Shape& d = in[0].shape();
        const int a = nd::normalize_axis(axis_, in[0].rank(), axis_name());
        const int64_t outer = nd::dims_product(d, 0, static_cast<size_t>(a));
        const int64_t n = d[static_cast<size_t>(a)];
        const int64_t inner = nd::dims_product(d, static_cast<size_t>(a) + 1, d.size());
        int64_t* o = out[0].data<int64_t>();
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            using V = std::conditional_t<std::is_arithmetic_v<T>, T, float>;
            const T* x = in[0].data<T>();
            for (int64_t p = 0; p < outer; ++p)
                for (int64_t q = 0; q < inner; ++q) {
                    int64_t best = 0;
                    V bv = convert_value<V>(x[p * n * inner + q]);
                    for (int64_t j = 1; j < n; ++j) {
                        const V v = convert_value<V>(x[(p * n + j) * inner + q]);
                        if (better(v, bv, last_)) {
                            best = j;
                            bv = v;
                        }
                    }
                    o[p * inner + q] = best;
                }
        });
    }

private:
    const char* axis_name() const { return max_ ? "axis (param 21)" : "axis (param 0)"; }

    // Whether v replaces the current best b (on ties only when the last index is wanted).
    template <class V> bool better(V v, V b, bool last) const
    {
        if constexpr (std::is_floating_point_v<V>) {
            if (std::isnan(b)) return last && std::isnan(v);
            if (std::isnan(v)) return true;
        }
        if (v == b) return last;
        return max_ ? v > b : v < b;
    }
    bool max_;
    int axis_ = 0;
    bool keepdims_ = true;
    bool last_ = false;
};

} // namespace

std::unique_ptr<Op> make_argmax() { return std::make_unique<ArgReduce>(true); }
std::unique_ptr<Op> make_argmin() { return std::make_unique<ArgReduce>(false); }

} // namespace kestrel
