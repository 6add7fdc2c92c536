// Unique (ONNX): the distinct elements of input 0 (any dtype; flattened), or
// with 1=has_axis=1 the distinct slices along 0=axis (negative from the end).
// Param 2=sorted (default 1): ascending order (slices compare
// lexicographically, in row-major order); 0: order of first occurrence.
// Outputs (1 to 4): the unique values Y; int64 indices of each one's first
// occurrence; int64 inverse indices (for each element or slice of the input,
// its position in Y); int64 counts. Output shapes depend on the values, so the
// layer declares dynamic_output_shape(); infer() gives the upper bound (every
// element or slice distinct).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "ops/common/tensor_util.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// The input seen as `count` slices of (outer, 1, inner) along the axis.
struct Slices {
    int64_t outer = 1, count = 1, inner = 1;
    int64_t at(int64_t slice, int64_t k) const { return (k / inner * count + slice) * inner + k % inner; }
    int64_t size() const { return outer * inner; }
};

// Unique slices (by their first index, in output order) and each slice's group.
struct Groups {
    std::vector<int64_t> first, count, inverse;
};

template <class T> bool less_value(T a, T b)
{
    if constexpr (std::is_arithmetic_v<T>) return a < b;
    else return to_double(a) < to_double(b);
}

template <class T> Groups group_slices(const T* x, const Slices& s, bool sorted)
{
    // -1 / 0 / 1 as slice a is lexicographically below / equal to / above slice b.
    auto compare = [&](int64_t a, int64_t b) {
        for (int64_t k = 0; k < s.size(); ++k) {
            const T va = x[s.at(a, k)], vb = x[s.at(b, k)];
            if (less_value(va, vb)) return -1;
            if (less_value(vb, va)) return 1;
        }
        return 0;
    };
    std::vector<int64_t> order(static_cast<size_t>(s.count));
    std::iota(order.begin(), order.end(), 0);
    // Stable: among equal slices the first occurrence comes first.
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
    Groups g;
    std::vector<int64_t> group_of(static_cast<size_t>(s.count));
    for (size_t i = 0; i < order.size(); ++i) {
        if (i == 0 || compare(order[i - 1], order[i]) != 0) {
            g.first.push_back(order[i]);
            g.count.push_back(0);
        }
        group_of[static_cast<size_t>(order[i])] = static_cast<int64_t>(g.first.size()) - 1;
        ++g.count.back();
    }
    // Position of each group in the output: sorted order, or order of first occurrence.
    std::vector<int64_t> position(g.first.size());
    std::iota(position.begin(), position.end(), 0);
    if (!sorted) {
        std::vector<int64_t> by_first(g.first.size());
        std::iota(by_first.begin(), by_first.end(), 0);
        std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) {
            return g.first[static_cast<size_t>(a)] < g.first[static_cast<size_t>(b)];
        });
        Groups reordered;
        for (size_t p = 0; p < by_first.size(); ++p) {
            const size_t old = static_cast<size_t>(by_first[p]);
            position[old] = static_cast<int64_t>(p);
            reordered.first.push_back(g.first[old]);
            reordered.count.push_back(g.count[old]);
        }
        g.first.swap(reordered.first);
        g.count.swap(reordered.count);
    }
    for (int64_t grp : group_of) g.inverse.push_back(position[static_cast<size_t>(grp)]);
    return g;
}

Tensor int64_vector(const std::vector<int64_t>& v)
{
    Tensor t({static_cast<int64_t>(v.size())}, DType::I64);
    if (!v.empty()) std::memcpy(t.raw(), v.data(), v.size() * sizeof(int64_t));
    return t;
}

class Unique : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        axis_ = pd.get_int(0, 0);
        has_axis_ = pd.get_int(1, 0) != 0;
        sorted_ = pd.get_int(2, 1) != 0;
    }
    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 1, 1);
        check(!out.empty() && out.size() <= 4, "expects 1 to 4 outputs (Y, indices, inverse_indices, counts), got ",
              out.size());
        const Slices s = slices_of(in[0].shape);
        out[0] = TensorDesc(has_axis_ ? in[0].shape : Shape{s.count}, in[0].dtype);
        for (size_t i = 1; i < out.size(); ++i) out[i] = TensorDesc(Shape{s.count}, DType::I64);
    }
    bool dynamic_output_shape() const override { return true; }
    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        const Slices s = slices_of(in[0].shape());
        Groups g;
        visit_dtype(in[0].dtype(), [&](auto tag) {
            using T = typename decltype(tag)::type;
            g = group_slices(in[0].data<T>(), s, sorted_);
        });
        out[0] = gather_slices(in[0], s, g.first);
        if (out.size() > 1) out[1] = int64_vector(g.first);
        if (out.size() > 2) out[2] = int64_vector(g.inverse);
        if (out.size() > 3) out[3] = int64_vector(g.count);
    }

private:
    Slices slices_of(const Shape& shape) const
    {
        Slices s;
        if (!has_axis_) {
            s.count = shape_numel(shape);
            return s;
        }
        check(!shape.empty(), "axis (param 0) needs an input of rank >= 1, got a scalar");
        const size_t a = static_cast<size_t>(nd::normalize_axis(axis_, static_cast<int64_t>(shape.size()), "axis (param 0)"));
        s.outer = nd::dims_product(shape, 0, a);
        s.count = shape[a];
        s.inner = nd::dims_product(shape, a + 1, shape.size());
        return s;
    }
    // The input with only the slices `keep` along the axis (or the kept elements, flattened).
    Tensor gather_slices(const Tensor& x, const Slices& s, const std::vector<int64_t>& keep) const
    {
        Shape shape = {static_cast<int64_t>(keep.size())};
        if (has_axis_) {
            shape = x.shape();
            shape[static_cast<size_t>(nd::normalize_axis(axis_, x.rank(), "axis (param 0)"))] =
                static_cast<int64_t>(keep.size());
        }
        Tensor y(shape, x.dtype());
        const size_t es = dtype_size(x.dtype());
        const Slices kept{s.outer, static_cast<int64_t>(keep.size()), s.inner};
        for (size_t j = 0; j < keep.size(); ++j)
            for (int64_t k = 0; k < s.size(); ++k)
                std::memcpy(static_cast<uint8_t*>(y.raw()) + kept.at(static_cast<int64_t>(j), k) * es,
                            static_cast<const uint8_t*>(x.raw()) + s.at(keep[j], k) * es, es);
        return y;
    }

    int axis_ = 0;
    bool has_axis_ = false, sorted_ = true;
};

} // namespace

std::unique_ptr<Op> make_unique() { return std::make_unique<Unique>(); }

} // namespace kestrel
