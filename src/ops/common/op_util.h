// Small helpers shared by op implementations.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/error.h"
#include "kestrel/op.h"

namespace kestrel {

inline void expect_input_count(const std::vector<TensorDesc>& in, size_t lo, size_t hi)
{
    if (in.size() < lo || in.size() > hi) {
        if (hi == SIZE_MAX) fail("expects at least ", lo, " input(s), got ", in.size());
        if (lo == hi) fail("expects ", lo, " input(s), got ", in.size());
        fail("expects ", lo, " to ", hi, " inputs, got ", in.size());
    }
}

// A layer whose shape expression names `lo` blobs: ncnn passes it every
// bottom the .param lists and the expression reads those it names, so more
// are accepted (and ignored).
inline void expect_expression_inputs(const std::vector<TensorDesc>& in, size_t lo)
{
    expect_input_count(in, lo, SIZE_MAX);
}

inline void expect_output_count(const std::vector<TensorDesc>& out, size_t n)
{
    check(out.size() == n, "expects ", n, " output(s), got ", out.size());
}

inline void expect_f32(const TensorDesc& d, const char* what = "input")
{
    check(d.dtype == DType::F32, what, " must be float32, got ", dtype_name(d.dtype));
}

// A float32 map of one input to an output of its shape (ncnn's activations).
inline void infer_float_map(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out)
{
    expect_input_count(in, 1, 1);
    expect_output_count(out, 1);
    expect_f32(in[0]);
    out[0] = in[0];
}

// The channel-block layouts (Op::blocked_layouts) of an op whose every output
// value comes from the input values at the same index (a unary map, a binary
// op or a sum of same-shape inputs, a view): all its blobs in one group,
// taken elementwise, when all have one shape; none with broadcasting.
inline BlockedLayouts same_shape_elementwise(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out)
{
    if (out.empty()) return {};
    for (const TensorDesc& d : in)
        if (d.shape != out[0].shape) return {};
    for (const TensorDesc& d : out)
        if (d.shape != out[0].shape) return {};
    BlockedLayouts layouts;
    layouts.inputs.assign(in.size(), 0);
    layouts.outputs.assign(out.size(), 0);
    layouts.elementwise = true;
    return layouts;
}

// ncnn's view of a rank-1..4 shape: [w,h,d,c] with 1 for absent axes.
struct NcnnDims {
    int dims = 0;
    int64_t w = 1, h = 1, d = 1, c = 1;
};

inline NcnnDims ncnn_dims(const Shape& s)
{
    NcnnDims n;
    n.dims = static_cast<int>(s.size());
    check(n.dims >= 1 && n.dims <= 4, "expects a rank 1-4 tensor, got shape ", shape_str(s));
    const int r = n.dims;
    n.w = s[r - 1];
    if (r >= 2) n.h = s[r - 2];
    if (r == 3) n.c = s[0];
    if (r == 4) {
        n.d = s[1];
        n.c = s[0];
    }
    return n;
}

// Shape from ncnn [w,h,d,c] of the given rank.
inline Shape shape_from_ncnn(int dims, int64_t w, int64_t h, int64_t d, int64_t c)
{
    switch (dims) {
    case 1: return {w};
    case 2: return {h, w};
    case 3: return {c, h, w};
    case 4: return {c, d, h, w};
    }
    fail("rank ", dims, " is not an ncnn rank (1-4)");
}

// A param that must be positive (kernel sizes, strides, ...).
// A DType code param (id, default def): a number dtype's code (0..12), or
// with `strings` also DType::String's (15).
inline DType dtype_param(const ParamDict& pd, int id, DType def, const char* what, bool strings = false)
{
    const int code = pd.get_int(id, static_cast<int>(def));
    check((code >= 0 && code <= static_cast<int>(DType::Bool)) || (strings && code == static_cast<int>(DType::String)),
          what, " (param ", id, ") ", code, strings ? " is not 0..12 or 15" : " is not 0..12");
    return static_cast<DType>(code);
}

inline int positive_param(const ParamDict& pd, int id, int def, const char* what)
{
    const int v = pd.get_int(id, def);
    check(v > 0, what, " (param ", id, ") must be > 0, got ", v);
    return v;
}

// Which form a layer of an ncnn name is in: ncnn's own (param 20 absent or 0)
// or ONNX's (20=1, its params from 21), read by the same op.
inline bool onnx_form(const ParamDict& pd, const char* onnx_name)
{
    const int form = pd.get_int(20, 0);
    check(form == 0 || form == 1, "param 20 must be 0 (ncnn's form) or 1 (ONNX's ", onnx_name, "), got ", form);
    return form == 1;
}

} // namespace kestrel
