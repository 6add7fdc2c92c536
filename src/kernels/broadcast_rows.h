// The broadcast engine's float row kernels (broadcast.h), written once for
// every ISA: a file under kernels/<isa>/ instantiates broadcast_rows_for<VectorOf<width>>
// (vector_of.h), compiled with that ISA's flags.
//
// Each value is one IEEE operation, the same as the scalar functors, so
// every ISA gives the same bits. Max/Min are written as std::max/std::min(a, b)
// are (a < b ? b : a, b < a ? b : a), which keeps their NaN and signed-zero
// results; compilers turn the vector form into one max/min instruction.
#pragma once
#include <cstdint>

#include "kernels/broadcast.h"
#include "kernels/vector_of.h"

// Internal linkage, one copy per ISA file (see vector_of.h).
namespace kestrel::detail {
namespace {

struct RowAdd {
    template <class T> static T apply(T a, T b) { return a + b; }
};
struct RowSub {
    template <class T> static T apply(T a, T b) { return a - b; }
};
struct RowMul {
    template <class T> static T apply(T a, T b) { return a * b; }
};
struct RowDiv {
    template <class T> static T apply(T a, T b) { return a / b; }
};
struct RowMax {
    template <class T> static T apply(T a, T b) { return a < b ? b : a; }
};
struct RowMin {
    template <class T> static T apply(T a, T b) { return b < a ? b : a; }
};

// o[i] = Op(a[i] or a[0], b[i] or b[0]) for i < n: A_VEC / B_VEC say whether
// the operand advances or is one value broadcast along the row.
template <class V, class Op, bool A_VEC, bool B_VEC> void broadcast_row(float* o, const float* a, const float* b, int64_t n)
{
    using vec = typename V::vec;
    constexpr int W = V::width;
    const vec a0 = A_VEC ? vec{} : V::set1(*a);
    const vec b0 = B_VEC ? vec{} : V::set1(*b);
    auto at = [&](int64_t i) { return Op::apply(A_VEC ? V::load(a + i) : a0, B_VEC ? V::load(b + i) : b0); };
    int64_t i = 0;
    for (; i + 4 * W <= n; i += 4 * W) { // four independent vectors in flight
        const vec r0 = at(i), r1 = at(i + W), r2 = at(i + 2 * W), r3 = at(i + 3 * W);
        V::store(o + i, r0);
        V::store(o + i + W, r1);
        V::store(o + i + 2 * W, r2);
        V::store(o + i + 3 * W, r3);
    }
    for (; i + W <= n; i += W) V::store(o + i, at(i));
    // The tail value by value: a padded vector costs more (memcpy) for rows
    // this short, and a last vector overlapping the one before would reread
    // outputs when the row is computed in place.
    for (; i < n; ++i) o[i] = Op::apply(A_VEC ? a[i] : *a, B_VEC ? b[i] : *b);
}

template <class V, class Op> constexpr SimdRowKernels rows_of()
{
    return SimdRowKernels{&broadcast_row<V, Op, true, true>, &broadcast_row<V, Op, true, false>,
                          &broadcast_row<V, Op, false, true>};
}

// The kernel of one ISA: its rows for every SimdBinary, in enum order.
template <class V> BroadcastRowKernel broadcast_rows_for(const char* isa)
{
    return BroadcastRowKernel{isa,
                              {SimdRowKernels{}, rows_of<V, RowAdd>(), rows_of<V, RowSub>(), rows_of<V, RowMul>(),
                               rows_of<V, RowDiv>(), rows_of<V, RowMax>(), rows_of<V, RowMin>()}};
}

} // namespace
} // namespace kestrel::detail
