// Helpers shared by the layers with ONNX semantics: axis and value-input
// handling and one strided N-d copy (Permute, Crop, DepthToSpace/SpaceToDepth,
// Tile), Gather/Scatter index handling. Declared in tensor_util.h.
//
// Conventions of these layers:
//   - shapes and axes are ONNX's (outermost first, negative axes from the end);
//   - values that ONNX passes as inputs (shape, starts, axes, k, ...) stay
//     inputs; infer() reads them from TensorDesc::value;
//   - param 20=dynamic (layers whose output shape depends on such a value): 0
//     (default) requires the value while planning (constants, shape arithmetic);
//     1 also accepts a value known only at run time: the layer then declares
//     dynamic_output_shape(), infer() gives a placeholder when the value is
//     unknown, and forward() produces the output with its true shape.
#include "ops/common/tensor_util.h"

#include <cstring>

#include "core/dtype_dispatch.h"
#include "kernels/broadcast.h"
#include "kestrel/op.h"

namespace kestrel::nd {

int normalize_axis(int64_t axis, int64_t rank, const char* what)
{
    check(axis >= -rank && axis < rank, what, " ", axis, " is out of range for rank ", rank, " (valid: ", -rank, "..",
          rank - 1, ")");
    return static_cast<int>(axis < 0 ? axis + rank : axis);
}

bool is_integer_dtype(DType t) { return !dtype_is_float(t) && t != DType::Bool; }

std::vector<int64_t> int_values(const Tensor& t, const char* what)
{
    check(is_integer_dtype(t.dtype()), what, " must be an integer tensor, got ", dtype_name(t.dtype()));
    std::vector<int64_t> v(static_cast<size_t>(t.numel()));
    visit_dtype(t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
            const T* p = t.data<T>();
            for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(p[i]);
        }
    });
    return v;
}

int64_t int_scalar(const Tensor& t, const char* what)
{
    check(t.numel() == 1, what, " must hold one value, got shape ", shape_str(t.shape()));
    return int_values(t, what)[0];
}

bool values_known(const std::vector<TensorDesc>& in, size_t first, size_t last)
{
    for (size_t i = first; i < std::min(last, in.size()); ++i)
        if (!in[i].value.defined()) return false;
    return true;
}

const Tensor& known_value(const TensorDesc& d, const char* what)
{
    check(d.value.defined(), what,
          " must be known while planning (a constant or computed from shapes); convert with 20=dynamic=1 "
          "to accept values known only at run time");
    return d.value;
}

Shape shape_value(const Tensor& t, const char* what)
{
    const Shape s = int_values(t, what);
    for (int64_t d : s) check(d >= 0, what, " ", shape_str(s), " has a negative dim");
    return s;
}

void broadcast_copy(const BroadcastPlan& plan, const Tensor& x, Tensor& y, const ExecContext& ctx)
{
    visit_element_size(dtype_size(x.dtype()), [&](auto tag) {
        using U = typename decltype(tag)::type;
        broadcast_unary(plan, x.data<U>(), y.data<U>(), [](U v) { return v; }, ParallelRunner(ctx));
    });
}

Shape dense_strides(const Shape& s)
{
    Shape st(s.size(), 1);
    for (int k = static_cast<int>(s.size()) - 2; k >= 0; --k) st[k] = st[k + 1] * s[k + 1];
    return st;
}

int64_t dims_product(const Shape& s, size_t begin, size_t end)
{
    int64_t p = 1;
    for (size_t k = begin; k < end && k < s.size(); ++k) p *= s[k];
    return p;
}

namespace {

// Copies `rows` runs of `run` bytes between tensors whose runs lie `from` and `to` bytes apart.
void copy_runs(const uint8_t* src, int64_t from, uint8_t* dst, int64_t to, int64_t rows, int64_t run)
{
    if (run > 0)
        for (int64_t r = 0; r < rows; ++r) std::memcpy(dst + r * to, src + r * from, static_cast<size_t>(run));
}

} // namespace

Tensor axis_range(const Tensor& x, int axis, int64_t begin, int64_t count)
{
    const Shape& s = x.shape();
    check(axis >= 0 && axis < x.rank() && begin >= 0 && count >= 0 && begin + count <= s[axis], "positions [", begin,
          ", ", begin + count, ") along axis ", axis, " are out of range for ", shape_str(s));
    Shape piece = s;
    piece[axis] = count;
    Tensor y(piece, x.dtype());
    const size_t a = static_cast<size_t>(axis);
    const int64_t inner = dims_product(s, a + 1, s.size()) * static_cast<int64_t>(dtype_size(x.dtype()));
    copy_runs(static_cast<const uint8_t*>(x.raw()) + begin * inner, s[a] * inner, static_cast<uint8_t*>(y.raw()),
              count * inner, dims_product(s, 0, a), count * inner);
    return y;
}

void put_axis_range(Tensor& y, int axis, int64_t begin, const Tensor& piece)
{
    const Shape& s = y.shape();
    check(axis >= 0 && axis < y.rank() && piece.rank() == y.rank(), "axis ", axis, " of a ", shape_str(piece.shape()),
          " piece in ", shape_str(s));
    const size_t a = static_cast<size_t>(axis);
    Shape fits = s;
    fits[a] = piece.shape()[a];
    check(piece.dtype() == y.dtype() && piece.shape() == fits && begin >= 0 && begin + fits[a] <= s[a], "a piece of ",
          dtype_name(piece.dtype()), " ", shape_str(piece.shape()), " does not fit ", dtype_name(y.dtype()), " ",
          shape_str(s), " at ", begin, " along axis ", axis);
    const int64_t inner = dims_product(s, a + 1, s.size()) * static_cast<int64_t>(dtype_size(y.dtype()));
    copy_runs(static_cast<const uint8_t*>(piece.raw()), fits[a] * inner, static_cast<uint8_t*>(y.raw()) + begin * inner,
              s[a] * inner, dims_product(s, 0, a), fits[a] * inner);
}

void copy_elements(const uint8_t* src, int64_t stride, uint8_t* dst, int64_t n, size_t esize)
{
    if (stride == 1) {
        std::memcpy(dst, src, static_cast<size_t>(n) * esize);
        return;
    }
    auto loop = [&](auto tag) {
        using U = typename decltype(tag)::type;
        const U* s = reinterpret_cast<const U*>(src);
        U* d = reinterpret_cast<U*>(dst);
        for (int64_t i = 0; i < n; ++i) d[i] = s[i * stride];
    };
    switch (esize) {
    case 1: loop(TypeTag<uint8_t>{}); break;
    case 2: loop(TypeTag<uint16_t>{}); break;
    case 4: loop(TypeTag<uint32_t>{}); break;
    case 8: loop(TypeTag<uint64_t>{}); break;
    default:
        for (int64_t i = 0; i < n; ++i)
            std::memcpy(dst + static_cast<size_t>(i) * esize, src + static_cast<size_t>(i * stride) * esize, esize);
    }
}

void strided_copy(const void* src_base, int64_t src_offset, const Shape& dims, const std::vector<int64_t>& strides,
                  void* dst_base, size_t esize, const ExecContext* ctx)
{
    // Drop size-1 axes, then merge axes the source walks contiguously.
    Shape d;
    std::vector<int64_t> s;
    for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] == 0) return;
        if (dims[k] == 1) continue;
        if (!d.empty() && s.back() == strides[k] * dims[k]) {
            d.back() *= dims[k];
            s.back() = strides[k];
        } else {
            d.push_back(dims[k]);
            s.push_back(strides[k]);
        }
    }
    const uint8_t* src = static_cast<const uint8_t*>(src_base) + src_offset * static_cast<int64_t>(esize);
    uint8_t* dst = static_cast<uint8_t*>(dst_base);
    if (d.empty()) {
        std::memcpy(dst, src, esize);
        return;
    }
    const int r = static_cast<int>(d.size());
    const int64_t inner = d[r - 1], inner_stride = s[r - 1];
    int64_t rows = 1;
    for (int k = 0; k < r - 1; ++k) rows *= d[k];
    auto body = [&](int64_t r0, int64_t r1) {
        std::vector<int64_t> idx(static_cast<size_t>(r), 0);
        int64_t off = 0, rem = r0;
        for (int k = r - 2; k >= 0; --k) {
            idx[k] = rem % d[k];
            rem /= d[k];
            off += idx[k] * s[k];
        }
        for (int64_t row = r0; row < r1; ++row) {
            copy_elements(src + off * static_cast<int64_t>(esize), inner_stride,
                          dst + static_cast<size_t>(row * inner) * esize, inner, esize);
            for (int k = r - 2; k >= 0; --k) {
                off += s[k];
                if (++idx[k] < d[k]) break;
                off -= s[k] * d[k];
                idx[k] = 0;
            }
        }
    };
    if (ctx != nullptr && rows > 1 && rows * inner >= 32768)
        ctx->parallel_for(rows, body);
    else
        body(0, rows);
}

void permuted_copy(const Tensor& x, const Shape& view, const std::vector<int>& perm, Tensor& y,
                   const ExecContext& ctx)
{
    const Shape st = dense_strides(view);
    Shape dims(perm.size());
    std::vector<int64_t> strides(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) {
        dims[k] = view[static_cast<size_t>(perm[k])];
        strides[k] = st[static_cast<size_t>(perm[k])];
    }
    strided_copy(x.raw(), 0, dims, strides, y.raw(), dtype_size(x.dtype()), &ctx);
}

int64_t resolve_index(int64_t i, int64_t dim, size_t axis)
{
    check(i >= -dim && i < dim, "index ", i, " is out of range for axis ", axis, " of size ", dim);
    return i < 0 ? i + dim : i;
}

int check_element_indices(const Shape& data, const Shape& indices, int64_t axis)
{
    check(!data.empty(), "data (input 0) must have rank >= 1");
    check(data.size() == indices.size(), "indices ", shape_str(indices), " must have the rank of data ",
          shape_str(data));
    const int a = normalize_axis(axis, static_cast<int64_t>(data.size()), "axis (param 0)");
    for (size_t k = 0; k < data.size(); ++k)
        check(static_cast<int>(k) == a || indices[k] <= data[k], "indices ", shape_str(indices), " exceed data ",
              shape_str(data), " on axis ", k);
    return a;
}

std::vector<int64_t> element_offsets(const Shape& data, const Shape& indices, int axis,
                                     const std::vector<int64_t>& idx)
{
    const Shape ds = dense_strides(data);
    const size_t a = static_cast<size_t>(axis);
    const int r = static_cast<int>(indices.size());
    std::vector<int64_t> offsets(idx.size());
    std::vector<int64_t> pos(indices.size(), 0);
    int64_t base = 0; // data offset of pos with 0 along the axis
    for (size_t t = 0; t < idx.size(); ++t) {
        offsets[t] = base + resolve_index(idx[t], data[a], a) * ds[a];
        // Next position (odometer); the axis coordinate does not move base.
        for (int k = r - 1; k >= 0; --k) {
            const size_t u = static_cast<size_t>(k);
            if (u != a) base += ds[u];
            if (++pos[u] < indices[u]) break;
            if (u != a) base -= ds[u] * indices[u];
            pos[u] = 0;
        }
    }
    return offsets;
}

int64_t tuple_offset(const int64_t* tuple, size_t m, const Shape& data, const Shape& data_strides, size_t first_axis)
{
    int64_t off = 0;
    for (size_t j = 0; j < m; ++j) {
        const size_t axis = first_axis + j;
        off += resolve_index(tuple[j], data[axis], axis) * data_strides[axis];
    }
    return off;
}

void check_scatter_dtypes(const TensorDesc& data, const TensorDesc& indices, const TensorDesc& updates)
{
    check(is_integer_dtype(indices.dtype), "indices (input 1) must be integers, got ", dtype_name(indices.dtype));
    check(updates.dtype == data.dtype, "updates (input 2) are ", dtype_name(updates.dtype), " but data is ",
          dtype_name(data.dtype));
}

int read_scatter_reduction(const ParamDict& pd, int id)
{
    const int reduction = pd.get_int(id, 0);
    check(reduction >= 0 && reduction <= 4, "reduction (param ", id,
          ") must be 0..4 (none, add, mul, max, min), got ", reduction);
    return reduction;
}

} // namespace kestrel::nd
