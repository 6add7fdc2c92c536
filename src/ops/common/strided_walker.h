// Element walks shared by the normalization and reduction ops: a row-major walk over a
// tensor's elements that keeps the offsets of operands paired with each
// element (statistics slots, broadcast scale/bias), and a walk over the
// elements each group of a reduction folds.
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

// X's axes split into kept ones, whose coordinates name a group (an output of
// a reduction, one set of statistics), and reduced ones, which span the
// elements each group folds. Groups are numbered row-major over the kept axes
// (the dense layout of X's shape with the reduced axes set to 1). A group's
// elements are visited in row-major order of the reduced axes, the innermost
// run of contiguous reduced axes as one strided loop; so folding one group
// gives the same bits whichever thread, or how many threads, run it.
class GroupWalk {
public:
    GroupWalk(const Shape& x, const std::vector<bool>& reduced)
    {
        Shape x_strides(x.size());
        int64_t stride = 1;
        for (size_t k = x.size(); k-- > 0;) {
            x_strides[k] = stride;
            stride *= x[k];
        }
        Shape dims, strides; // the reduced axes, merged where one continues the next
        for (size_t k = 0; k < x.size(); ++k) {
            if (!reduced[k]) {
                kept_dims_.push_back(x[k]);
                kept_strides_.push_back(x_strides[k]);
                groups_ *= x[k];
                continue;
            }
            group_size_ *= x[k];
            if (!dims.empty() && strides.back() == x_strides[k] * x[k]) {
                dims.back() *= x[k];
                strides.back() = x_strides[k];
            } else {
                dims.push_back(x[k]);
                strides.push_back(x_strides[k]);
            }
        }
        if (!dims.empty()) {
            inner_count_ = dims.back();
            inner_stride_ = strides.back();
            dims.pop_back();
            strides.pop_back();
        }
        outer_dims_ = dims;
        outer_strides_ = strides;
    }
    int64_t groups() const { return groups_; }
    int64_t group_size() const { return group_size_; }

    // Calls visit(offset into X) for every element of group g, in order.
    template <class Visit> void visit(int64_t g, Visit&& visit) const
    {
        if (group_size_ == 0) return;
        int64_t base = 0;
        for (size_t k = kept_dims_.size(); k-- > 0;) {
            base += (g % kept_dims_[k]) * kept_strides_[k];
            g /= kept_dims_[k];
        }
        auto run = [&](int64_t start) {
            for (int64_t i = 0; i < inner_count_; ++i) visit(start + i * inner_stride_);
        };
        if (outer_dims_.empty()) return run(base); // the common case: one strided run, no walker to set up
        const int64_t outer = group_size_ / inner_count_;
        Walker w(outer_dims_, {outer_strides_}, 0);
        for (int64_t o = 0; o < outer; ++o, w.next()) run(base + w.offset(0));
    }

private:
    Shape kept_dims_, kept_strides_, outer_dims_, outer_strides_;
    int64_t groups_ = 1, group_size_ = 1, inner_count_ = 1, inner_stride_ = 0;
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
