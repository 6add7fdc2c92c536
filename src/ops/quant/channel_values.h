// What the quantization ops (Quantize, Dequantize, Requantize, in ncnn's and
// ONNX's forms) share: per-channel values (ncnn's weight vectors, or ONNX's
// scale / zero-point inputs) and the one loop applying them block by block.
#pragma once

#include <algorithm>
#include <vector>

#include "core/dtype_dispatch.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

// Which value applies to element i: blocks of `inner` elements, block b
// taking channel b % channels (channels = 1: one value for all).
struct ChannelGroups {
    int64_t channels = 1, inner = 1;
};

// Runs fn(channel, begin, end) over the blocks of an n-element tensor, in
// parallel: a large block (one value for the whole tensor) in spans of it.
template <class Fn> void for_each_block(const ChannelGroups& g, int64_t n, const ExecContext& ctx, const Fn& fn)
{
    if (n == 0) return;
    constexpr int64_t kSpan = 16384;
    const int64_t inner = std::max<int64_t>(g.inner, 1), blocks = n / inner;
    const int64_t spans_per_block = (inner + kSpan - 1) / kSpan, span = (inner + spans_per_block - 1) / spans_per_block;
    ctx.parallel_for(blocks * spans_per_block, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const int64_t b = i / spans_per_block, from = b * inner + i % spans_per_block * span;
            fn(b % g.channels, from, std::min(from + span, (b + 1) * inner));
        }
    });
}

// ncnn's per-row values: one for the whole tensor or one per row (2-D) /
// channel (3-D, 4-D); a 1-D input takes one value. Rows are the blocks either way.
inline ChannelGroups ncnn_row_groups(const Shape& s, int64_t values)
{
    const int64_t rows = s.size() == 1 ? 1 : s[0];
    return ChannelGroups{values == 1 ? 1 : rows, rows > 0 ? shape_numel(s) / rows : 1};
}

// ONNX's values: a scalar (one block) or a 1-D tensor along `axis`.
inline ChannelGroups onnx_axis_groups(const Shape& x, const Shape& values, int axis)
{
    ChannelGroups g;
    g.inner = shape_numel(x);
    if (shape_numel(values) == 1) return g;
    check(values.size() == 1, "scale must be one value or 1-D (per axis), got ", shape_str(values));
    const int a = nd::normalize_axis(axis, static_cast<int64_t>(x.size()), "axis");
    check(values[0] == x[static_cast<size_t>(a)], "per-axis scale has ", values[0], " values but x has ",
          x[static_cast<size_t>(a)], " along axis ", a);
    g.channels = values[0];
    g.inner = nd::dims_product(x, static_cast<size_t>(a) + 1, x.size());
    return g;
}

// ncnn's scale or bias vector: its size is a param, its values raw fp32
// weights (one, or one per row / channel; see ncnn_row_groups).
class NcnnChannelValues {
public:
    // Required vectors have size >= 1 (default 1), optional ones >= 0 (default 0, absent).
    void read_size(const ParamDict& pd, int id, const char* what, bool optional)
    {
        id_ = id, what_ = what, optional_ = optional;
        if (optional) {
            size_ = pd.get_int(id, 0);
            check(size_ >= 0, what, " (param ", id, ") must be >= 0, got ", size_);
        } else {
            size_ = positive_param(pd, id, 1, what);
        }
    }

    void load(WeightReader& wr)
    {
        values_.clear();
        if (size_ == 0) return;
        const Tensor t = wr.load(size_, WeightEncoding::Raw);
        values_.assign(t.data<float>(), t.data<float>() + size_);
    }

    // The size must suit input shape s: 1, or the count of rows / channels (a 1-D input takes only 1).
    void check_fits(const Shape& s) const
    {
        if (optional_ && size_ == 0) return;
        if (s.size() == 1) {
            check(size_ == 1, what_, " (param ", id_, " = ", size_, ") must be 1 for a 1-D input");
            return;
        }
        check(size_ == 1 || size_ == s[0], what_, " (param ", id_, " = ", size_, ") must be 1 or ", s[0], " (the ",
              s.size() == 2 ? "rows" : "channels", " of input ", shape_str(s), ")");
    }

    int64_t size() const { return size_; }
    // The value of a channel (0 when the vector is absent).
    float at(int64_t channel) const
    {
        if (values_.empty()) return 0.f;
        return values_.size() == 1 ? values_[0] : values_[static_cast<size_t>(channel)];
    }
    int64_t bytes() const { return static_cast<int64_t>(values_.size() * sizeof(float)); }

private:
    int size_ = 0, id_ = 0;
    const char* what_ = "";
    bool optional_ = false;
    std::vector<float> values_;
};

// ncnn's layers map a rank 1-4 input of dtype `from` to `to`, element by element.
inline void infer_ncnn_rowwise(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out, DType from, DType to,
                               std::initializer_list<const NcnnChannelValues*> vectors)
{
    expect_input_count(in, 1, 1);
    expect_output_count(out, 1);
    const Shape& s = in[0].shape;
    check(in[0].dtype == from, "input must be ", dtype_name(from), ", got ", dtype_name(in[0].dtype));
    check(!s.empty() && s.size() <= 4, "expects a rank 1-4 input, got ", shape_str(s));
    for (const NcnnChannelValues* v : vectors) v->check_fits(s);
    out[0] = TensorDesc(s, to);
}

// ONNX's form: inputs x, scale[, zero_point]; a zero point present when non-empty.
inline bool onnx_input_present(const std::vector<TensorDesc>& in, size_t i)
{
    return i < in.size() && shape_numel(in[i].shape) > 0;
}
inline bool onnx_input_present(const std::vector<Tensor>& in, size_t i) { return i < in.size() && in[i].numel() > 0; }

inline void check_onnx_scale_and_zero_point(const std::vector<TensorDesc>& in, int axis)
{
    check(dtype_is_float(in[1].dtype), "scale (input 1) must be a float tensor, got ", dtype_name(in[1].dtype));
    check(shape_numel(in[1].shape) >= 1, "scale (input 1) is empty");
    onnx_axis_groups(in[0].shape, in[1].shape, axis);
    if (onnx_input_present(in, 2))
        check(in[2].shape == in[1].shape || (shape_numel(in[2].shape) == 1 && shape_numel(in[1].shape) == 1),
              "zero_point (input 2) shape ", shape_str(in[2].shape), " differs from scale's ", shape_str(in[1].shape));
}

// The values of a small tensor (scales, zero points; or x of any dtype) as floats.
inline std::vector<float> values_as_floats(const Tensor& t)
{
    std::vector<float> v(static_cast<size_t>(t.numel()));
    visit_dtype(t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(to_double(t.data<T>()[i]));
    });
    return v;
}

} // namespace kestrel
