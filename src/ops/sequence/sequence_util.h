// Helpers of the sequence ops (ONNX's sequence values: DType::Sequence
// tensors whose elements are tensors, Tensor::sequence).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kestrel/error.h"
#include "kestrel/op.h"

namespace kestrel::sequence {

// A layer that moves values whole (tensors, sequences, optionals, strings)
// and copies no element's bytes: the runtime lets every kind of value reach it.
class ValueOp : public Op {
public:
    bool takes_sequences() const override { return true; }
    bool takes_strings() const override { return true; }
};

inline void expect_sequence(const TensorDesc& d, const char* what)
{
    check(d.dtype == DType::Sequence, what, " must be a sequence, got ", dtype_name(d.dtype));
}

inline TensorDesc desc_of(int64_t items) { return TensorDesc(Shape{items}, DType::Sequence); }

// The number of elements a sequence's desc plans (its one dim).
inline int64_t length(const TensorDesc& d, const char* what)
{
    expect_sequence(d, what);
    check(d.shape.size() == 1, what, " must be planned as (n,), got ", shape_str(d.shape));
    return d.shape[0];
}

// A position input (one integer) in [-n, n + extra) as an index in [0, n + extra).
inline int64_t position(const Tensor& p, int64_t n, int64_t extra, const char* what)
{
    check(p.numel() == 1, what, " must hold one integer, got shape ", shape_str(p.shape()));
    check(p.dtype() == DType::I32 || p.dtype() == DType::I64, what, " must be int32 or int64, got ",
          dtype_name(p.dtype()));
    const int64_t v = p.to(DType::I64).data<int64_t>()[0];
    check(v >= -n && v < n + extra, what, " ", v, " is out of range for a sequence of ", n);
    return v < 0 ? v + n : v;
}

// Writes `items` into a sequence (or optional) output: in place where it
// was planned with as many elements (the runtime keeps that tensor), else as a new one.
inline void set_items(Tensor& out, const std::vector<Tensor>& items, DType dtype = DType::Sequence)
{
    if (out.dtype() == dtype && out.numel() == static_cast<int64_t>(items.size()))
        std::copy(items.begin(), items.end(), out.data<Tensor>());
    else
        out = dtype == DType::Sequence ? Tensor::sequence(items) : Tensor::optional(items.empty() ? Tensor() : items[0]);
}

// The element dtype a converter recorded in param `id` (-1: unknown, float32
// for the placeholders), checked to be a tensor dtype.
inline int element_dtype_param(const ParamDict& pd, int id)
{
    const int code = pd.get_int(id, -1);
    check((code >= -1 && code <= static_cast<int>(DType::Bool)) || code == static_cast<int>(DType::String),
          "the elements' dtype (param ", id, ") ", code, " is not -1..12 or 15");
    return code;
}
inline DType element_dtype(int code) { return code < 0 ? DType::F32 : static_cast<DType>(code); }

} // namespace kestrel::sequence
