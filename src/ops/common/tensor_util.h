// Helpers shared by the layers with ONNX semantics (any rank and dtype, value
// inputs); see tensor_util.cpp for the conventions of these layers.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "kestrel/op.h"

namespace kestrel {
struct BroadcastPlan;
} // namespace kestrel

namespace kestrel::nd {

// Axes and values given as inputs.
int normalize_axis(int64_t axis, int64_t rank, const char* what);
bool is_integer_dtype(DType t);
std::vector<int64_t> int_values(const Tensor& t, const char* what);
int64_t int_scalar(const Tensor& t, const char* what);
const Tensor& known_value(const TensorDesc& d, const char* what);
// Whether the values of inputs [first, last) are known while planning (inputs
// past the end count as known): a dynamic layer's output shapes follow from them.
bool values_known(const std::vector<TensorDesc>& in, size_t first, size_t last = SIZE_MAX);

// A shape given as a value input (Expand, ConstantOfShape): integers, each >= 0.
Shape shape_value(const Tensor& t, const char* what);

// Dense layouts and copies.
Shape dense_strides(const Shape& s);
int64_t dims_product(const Shape& s, size_t begin, size_t end);
// Positions [begin, begin + count) of x along `axis`, as a tensor (that axis count long).
Tensor axis_range(const Tensor& x, int axis, int64_t begin, int64_t count);
// Writes `piece` (y's dtype and shape but along `axis`) at [begin, ...) of y along `axis`.
void put_axis_range(Tensor& y, int axis, int64_t begin, const Tensor& piece);
void strided_copy(const void* src, int64_t src_offset, const Shape& dims, const std::vector<int64_t>& strides,
                  void* dst, size_t esize, const ExecContext* ctx);

// y = x seen as the dense shape `view` with its axes permuted: axis k of y is
// axis perm[k] of the view (Transpose, DepthToSpace, SpaceToDepth).
void permuted_copy(const Tensor& x, const Shape& view, const std::vector<int>& perm, Tensor& y,
                   const ExecContext& ctx);

// Visits the unsigned integer type of an element size (1, 2, 4 or 8 bytes), so
// that layers which only move values (copies, broadcasts, fills) have one
// kernel per size instead of one per dtype.
template <class Fn> void visit_element_size(size_t esize, Fn&& fn)
{
    switch (esize) {
    case 1: fn(TypeTag<uint8_t>{}); return;
    case 2: fn(TypeTag<uint16_t>{}); return;
    case 4: fn(TypeTag<uint32_t>{}); return;
    case 8: fn(TypeTag<uint64_t>{}); return;
    }
    fail("unsupported element size ", esize);
}

// y = x broadcast by a one-input plan (broadcast_to), any dtype.
void broadcast_copy(const BroadcastPlan& plan, const Tensor& x, Tensor& y, const ExecContext& ctx);

// ---- Gather / Scatter indices

// Index i into an axis of size dim, negative counting from the end; throws
// (naming the axis) when it is out of range.
int64_t resolve_index(int64_t i, int64_t dim, size_t axis);

// GatherElements / ScatterElements: indices have data's rank, each dim no
// larger than data's except along `axis` (normalized and returned).
int check_element_indices(const Shape& data, const Shape& indices, int64_t axis);

// GatherElements / ScatterElements: for every element of indices (row-major),
// the flat offset in data of the element it addresses: its own position with
// the coordinate along `axis` replaced by its (resolved) index value.
std::vector<int64_t> element_offsets(const Shape& data, const Shape& indices, int axis,
                                     const std::vector<int64_t>& idx);

// GatherND / ScatterND: the flat offset in data of the slice that an index
// tuple of m values addresses along data's axes first_axis .. first_axis+m-1.
int64_t tuple_offset(const int64_t* tuple, size_t m, const Shape& data, const Shape& data_strides, size_t first_axis);

// Scatter layers: indices integers, updates of data's dtype.
void check_scatter_dtypes(const TensorDesc& data, const TensorDesc& indices, const TensorDesc& updates);

// ONNX scatter reduction param: 0 none (replace), 1 add, 2 mul, 3 max, 4 min.
int read_scatter_reduction(const ParamDict& pd, int id);

// Combines an existing value with an update per a scatter reduction (bool:
// add/max are or, mul/min are and; half types through double).
template <class T> T combine(T a, T b, int reduction)
{
    if constexpr (std::is_same_v<T, bool>) {
        switch (reduction) {
        case 1: case 3: return a || b;
        case 2: case 4: return a && b;
        default: return b;
        }
    } else if constexpr (std::is_arithmetic_v<T>) {
        switch (reduction) {
        case 1: return static_cast<T>(a + b);
        case 2: return static_cast<T>(a * b);
        case 3: return std::max(a, b);
        case 4: return std::min(a, b);
        default: return b;
        }
    } else {
        const double x = to_double(a), y = to_double(b);
        switch (reduction) {
        case 1: return convert_value<T>(x + y);
        case 2: return convert_value<T>(x * y);
        case 3: return convert_value<T>(std::max(x, y));
        case 4: return convert_value<T>(std::min(x, y));
        default: return b;
        }
    }
}

} // namespace kestrel::nd
