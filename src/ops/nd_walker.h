// Element walks shared by NormalizeND and ReduceND: a row-major walk over a
// tensor's elements that keeps the offsets of operands paired with each
// element (statistics slots, broadcast scale/bias, reduction outputs).
#pragma once
#include <utility>
#include <vector>

#include "core/dtype_dispatch.h"
#include "kestrel/error.h"
#include "kestrel/tensor.h"

namespace kestrel::nd {

// Walks X's elements in row-major order keeping, for each operand, the offset
// of the element it pairs with (operand strides are 0 along broadcast axes).
class Walker {
public:
    Walker(const Shape& dims, std::vector<Shape> strides, int64_t start)
        : dims_(dims), strides_(std::move(strides)), coords_(dims.size()), offsets_(strides_.size(), 0)
    {
        for (size_t k = dims.size(); k-- > 0 && dims[k] > 0;) {
            coords_[k] = start % dims[k];
            start /= dims[k];
            for (size_t o = 0; o < strides_.size(); ++o) offsets_[o] += coords_[k] * strides_[o][k];
        }
    }
    int64_t offset(size_t operand) const { return offsets_[operand]; }
    void next()
    {
        for (size_t k = dims_.size(); k-- > 0;) {
            for (size_t o = 0; o < strides_.size(); ++o) offsets_[o] += strides_[o][k];
            if (++coords_[k] < dims_[k]) return;
            for (size_t o = 0; o < strides_.size(); ++o) offsets_[o] -= coords_[k] * strides_[o][k];
            coords_[k] = 0;
        }
    }

private:
    Shape dims_;
    std::vector<Shape> strides_;
    Shape coords_, offsets_;
};

// Strides along x's axes of an operand of shape `aligned` (x's rank, each dim
// x's or 1): dense strides, 0 along the broadcast axes.
inline Shape broadcast_strides(const Shape& x, const Shape& aligned)
{
    Shape strides(x.size(), 0);
    int64_t stride = 1;
    for (size_t k = x.size(); k-- > 0;) {
        check(aligned[k] == x[k] || aligned[k] == 1, "operand ", shape_str(aligned), " does not broadcast to ",
              shape_str(x));
        if (aligned[k] != 1) strides[k] = stride;
        stride *= aligned[k];
    }
    return strides;
}

// Values of a tensor of any dtype, as double.
inline std::vector<double> as_doubles(const Tensor& t)
{
    std::vector<double> v(static_cast<size_t>(t.numel()));
    visit_dtype(t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (size_t i = 0; i < v.size(); ++i) v[i] = to_double(t.data<T>()[i]);
    });
    return v;
}

} // namespace kestrel::nd
