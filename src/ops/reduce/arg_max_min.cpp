// ArgMax and ArgMin (ONNX's): int64 index of the largest / smallest element of
// input 0 (numeric) along an axis (default 0), with keepdims (default 1: the
// axis stays with size 1) and select_last_index (default 0: ties give the
// first index). NaN wins over any number (as in numpy).
// ArgMin's params: 0=axis 1=keepdims 2=select_last_index. ArgMax shares its
// name with ncnn's layer, so its ONNX form is 20=1 with 21=axis 22=keepdims
// 23=select_last_index.
// ncnn's ArgMax: the topk (param 1, default 1) largest of the whole float32
// input (any rank), as float32 indices in a (1, topk) row; with out_max_val
// (param 0) a (2, topk) tensor, the values in row 0 and their indices in row
// 1. Equal values put the higher index first, as ncnn's descending sort of
// (value, index) pairs does.
#include <cmath>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"
#include "ops/reduce/top_k.h"

namespace kestrel {

namespace {

class ArgReduce : public Op {
public:
    explicit ArgReduce(bool max) : max_(max) {}
    void load_param(const ParamDict& pd) override
    {
        const int first = max_ ? 21 : 0; // ArgMax's ONNX form keeps off ncnn's ids
        ncnn_ = max_ && pd.get_int(20, 0) == 0;
        if (ncnn_) {
            out_max_val_ = pd.get_int(0, 0) != 0;
            topk_ = pd.get_int(1, 1);
            check(topk_ >= 1, "topk (param 1) must be at least 1, got ", topk_);
            return;
        }
        axis_ = pd.get_int(first, 0);
        keepdims_ = pd.get_int(first + 1, 1) != 0;
        last_ = pd.get_int(first + 2, 0) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        expect_output_count(out, 1);
        if (ncnn_) {
            check(in[0].dtype == DType::F32, "ncnn's ArgMax takes float32, got ", dtype_name(in[0].dtype));
            check(shape_numel(in[0].shape) >= topk_, "topk (param 1) ", topk_, " exceeds the input's ",
                  shape_numel(in[0].shape), " values");
            out[0] = TensorDesc(Shape{out_max_val_ ? 2 : 1, topk_}, DType::F32);
            return;
        }
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
    // Scratch 0 (ncnn's form): the order of the input's values.
    std::unique_ptr<OpState> prepare(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                                     PrepareContext& ctx) const override
    {
        if (ncnn_) ctx.request_scratch(shape_numel(in[0].shape) * static_cast<int64_t>(sizeof(int64_t)));
        return nullptr;
    }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext& ctx) const override
    {
        if (ncnn_) {
            forward_ncnn(in[0], out[0], ctx);
            return;
        }
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
    void forward_ncnn(const Tensor& x, Tensor& y, const ExecContext& ctx) const
    {
        int64_t* order = ctx.scratch_as<int64_t>(0);
        const float* v = x.data<float>();
        select_top_k(v, x.numel(), topk_, true, true, order);
        float* indices = y.data<float>() + (out_max_val_ ? topk_ : 0);
        for (int64_t j = 0; j < topk_; ++j) {
            if (out_max_val_) y.data<float>()[j] = v[order[j]];
            indices[j] = static_cast<float>(order[j]);
        }
    }

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
    bool ncnn_ = false; // ncnn's ArgMax (top-k of the whole input)
    bool out_max_val_ = false;
    int64_t topk_ = 1;
};

} // namespace

std::unique_ptr<Op> make_argmax() { return std::make_unique<ArgReduce>(true); }
std::unique_ptr<Op> make_argmin() { return std::make_unique<ArgReduce>(false); }

} // namespace kestrel
