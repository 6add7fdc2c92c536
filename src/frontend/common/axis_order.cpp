#include "frontend/common/axis_order.h"

#include <algorithm>

#include "kestrel/op.h"
#include "ops/common/tensor_util.h"

namespace kestrel {

std::vector<int> engine_permutation(AxisOrder order, int rank)
{
    std::vector<int> perm(static_cast<size_t>(std::max(rank, 0)));
    for (int k = 0; k < rank; ++k) perm[static_cast<size_t>(k)] = k;
    if (order == AxisOrder::ChannelsFirst || rank < 3) return perm;
    // (N, S1..Sn, C) -> (N, C, S1..Sn)
    perm[1] = rank - 1;
    for (int k = 2; k < rank; ++k) perm[static_cast<size_t>(k)] = k - 1;
    return perm;
}

int engine_axis(AxisOrder order, int rank, int axis)
{
    check(axis >= -rank && axis < rank, "axis ", axis, " is out of range for rank ", rank);
    if (axis < 0) axis += rank;
    const std::vector<int> perm = engine_permutation(order, rank);
    for (int k = 0; k < rank; ++k)
        if (perm[static_cast<size_t>(k)] == axis) return k;
    return axis; // unreachable: perm is a permutation
}

Shape engine_shape(AxisOrder order, const Shape& shape)
{
    const std::vector<int> perm = engine_permutation(order, static_cast<int>(shape.size()));
    Shape s(shape.size());
    for (size_t k = 0; k < shape.size(); ++k) s[k] = shape[static_cast<size_t>(perm[k])];
    return s;
}

Tensor to_engine_order(AxisOrder order, const Tensor& t)
{
    const std::vector<int> perm = engine_permutation(order, static_cast<int>(t.shape().size()));
    bool identity = true;
    for (size_t k = 0; k < perm.size(); ++k) identity = identity && perm[k] == static_cast<int>(k);
    if (identity) return t;
    Tensor y(engine_shape(order, t.shape()), t.dtype());
    nd::permuted_copy(t, t.shape(), perm, y, ExecContext(nullptr, 1));
    return y;
}

} // namespace kestrel
