#include "kernels/broadcast.h"

#include <sstream>

#include "kernels/isa.h"
#include "kestrel/error.h"
#include "kestrel/parallel.h"
#include "kestrel/tensor.h"

namespace kestrel {

namespace {

std::string shapes_text(const std::vector<Shape>& shapes)
{
    std::string s;
    for (size_t i = 0; i < shapes.size(); ++i) {
        if (i) s += (i + 1 == shapes.size()) ? " and " : ", ";
        s += shape_str(shapes[i]);
    }
    return s;
}

[[noreturn]] void incompatible(BroadcastRule rule, const std::vector<Shape>& shapes, const std::string& why)
{
    fail("cannot broadcast shapes ", shapes_text(shapes), " (", broadcast_rule_name(rule), " rule): ", why);
}

void check_dims(const Shape& s)
{
    for (int64_t d : s) check(d >= 0, "negative dimension in shape ", shape_str(s));
}

// numpy alignment of `s` to `rank` axes: leading 1s.
Shape right_aligned(const Shape& s, size_t rank)
{
    Shape r(rank - s.size(), 1);
    r.insert(r.end(), s.begin(), s.end());
    return r;
}

} // namespace

const char* broadcast_rule_name(BroadcastRule rule)
{
    switch (rule) {
    case BroadcastRule::Ncnn: return "ncnn";
    case BroadcastRule::Numpy: return "numpy";
    case BroadcastRule::Unidirectional: return "unidirectional";
    }
    return "unknown";
}

int64_t BroadcastPlan::in_numel(int input) const { return shape_numel(in_shapes[input]); }

BroadcastPlan BroadcastPlan::swapped(int i, int j) const
{
    BroadcastPlan p = *this;
    std::swap(p.in_shapes[i], p.in_shapes[j]);
    std::swap(p.strides[i], p.strides[j]);
    return p;
}

std::string BroadcastPlan::describe() const
{
    std::ostringstream os;
    os << shape_str(out_shape) << " (merged [";
    for (size_t k = 0; k < dims.size(); ++k) os << (k ? "," : "") << dims[k];
    os << "]:";
    for (size_t i = 0; i < strides.size(); ++i) {
        os << " in" << i << " " << shape_str(in_shapes[i]) << " [";
        for (size_t k = 0; k < strides[i].size(); ++k) os << (k ? "," : "") << strides[i][k];
        os << "]";
    }
    os << ")";
    return os.str();
}

BroadcastPlan make_broadcast_plan(const Shape& out_shape, const std::vector<Shape>& aligned,
                                  const std::vector<Shape>& original)
{
    check(!aligned.empty() && aligned.size() == original.size(), "broadcast plan needs matching input lists");
    const size_t rank = out_shape.size();
    const size_t n_in = aligned.size();
    for (size_t i = 0; i < n_in; ++i) {
        check(aligned[i].size() == rank, "broadcast plan: input ", i, " not aligned to the output rank");
        check(shape_numel(aligned[i]) == shape_numel(original[i]), "broadcast plan: input ", i,
              " aligned shape ", shape_str(aligned[i]), " does not match ", shape_str(original[i]));
        for (size_t k = 0; k < rank; ++k)
            check(aligned[i][k] == 1 || aligned[i][k] == out_shape[k], "broadcast plan: input ", i, " axis ", k,
                  " is ", aligned[i][k], ", output ", out_shape[k]);
    }

    BroadcastPlan p;
    p.out_shape = out_shape;
    p.in_shapes = original;
    p.numel = shape_numel(out_shape);
    p.strides.assign(n_in, {});

    if (p.numel == 0) { // nothing to walk
        p.dims = {0};
        for (auto& s : p.strides) s = {0};
        return p;
    }

    // Dense strides of each aligned input; 0 on broadcast axes. Size-1 output axes
    // are dropped (every operand has size 1 there).
    std::vector<std::vector<int64_t>> full(n_in, std::vector<int64_t>(rank, 0));
    for (size_t i = 0; i < n_in; ++i) {
        int64_t s = 1;
        for (size_t k = rank; k-- > 0;) {
            full[i][k] = aligned[i][k] == 1 ? 0 : s;
            s *= aligned[i][k];
        }
    }
    std::vector<size_t> keep;
    for (size_t k = 0; k < rank; ++k)
        if (out_shape[k] != 1) keep.push_back(k);
    if (keep.empty()) {
        p.dims = {1};
        for (auto& s : p.strides) s = {0};
        return p;
    }

    // Merge axis k into the next kept axis when every input steps over both as one:
    // stride[k] == stride[next] * dim[next] (true for "both broadcast", 0 == 0).
    for (size_t j = 0; j < keep.size(); ++j) {
        const size_t k = keep[j];
        bool merge = !p.dims.empty();
        if (merge) {
            for (size_t i = 0; i < n_in && merge; ++i)
                merge = p.strides[i].back() == full[i][k] * out_shape[k];
        }
        if (merge) {
            p.dims.back() *= out_shape[k];
            for (size_t i = 0; i < n_in; ++i) p.strides[i].back() = full[i][k];
        } else {
            p.dims.push_back(out_shape[k]);
            for (size_t i = 0; i < n_in; ++i) p.strides[i].push_back(full[i][k]);
        }
    }
    return p;
}

BroadcastPlan broadcast_numpy(const std::vector<Shape>& shapes)
{
    check(!shapes.empty(), "broadcast of no inputs");
    size_t rank = 0;
    for (const Shape& s : shapes) {
        check_dims(s);
        rank = std::max(rank, s.size());
    }
    std::vector<Shape> aligned;
    for (const Shape& s : shapes) aligned.push_back(right_aligned(s, rank));
    Shape out(rank, 1);
    for (size_t k = 0; k < rank; ++k) {
        for (const Shape& s : aligned) {
            if (s[k] == 1) continue;
            if (out[k] == 1)
                out[k] = s[k];
            else if (out[k] != s[k])
                incompatible(BroadcastRule::Numpy, shapes,
                             detail::concat("axis ", static_cast<int64_t>(k) - static_cast<int64_t>(rank), " has sizes ",
                                            out[k], " and ", s[k]));
        }
    }
    return make_broadcast_plan(out, aligned, shapes);
}

BroadcastPlan broadcast_numpy(const Shape& a, const Shape& b) { return broadcast_numpy(std::vector<Shape>{a, b}); }

BroadcastPlan broadcast_unidirectional(const Shape& a, const Shape& b)
{
    check_dims(a);
    check_dims(b);
    const std::vector<Shape> shapes{a, b};
    if (b.size() > a.size())
        incompatible(BroadcastRule::Unidirectional, shapes, "the second operand has the higher rank");
    const Shape bb = right_aligned(b, a.size());
    for (size_t k = 0; k < a.size(); ++k)
        if (bb[k] != 1 && bb[k] != a[k])
            incompatible(BroadcastRule::Unidirectional, shapes,
                         detail::concat("axis ", static_cast<int64_t>(k) - static_cast<int64_t>(a.size()), " has size ",
                                        bb[k], ", target ", a[k]));
    return make_broadcast_plan(a, {a, bb}, shapes);
}

BroadcastPlan broadcast_ncnn(const Shape& a, const Shape& b)
{
    check_dims(a);
    check_dims(b);
    const std::vector<Shape> shapes{a, b};
    if (a.size() > 4 || b.size() > 4)
        incompatible(BroadcastRule::Ncnn, shapes, "ncnn blobs have at most 4 axes (use broadcast_rule=1 for numpy)");
    const size_t rank = std::max(a.size(), b.size());

    // Lift the lower-rank operand x next to y (ours is ncnn's [w,h,d,c] reversed):
    // a 1-D x goes on y's outermost axis when the sizes match, else on w; a 2-D or
    // 3-D x keeps its axes outermost and gains size-1 inner axes. Rank 0 is a scalar.
    auto lift = [rank](const Shape& x, const Shape& y) -> Shape {
        if (x.size() == rank) return x;
        if (x.empty()) return Shape(rank, 1);
        Shape r(rank, 1);
        if (x.size() == 1 && x[0] != y[0]) {
            r[rank - 1] = x[0];
        } else {
            std::copy(x.begin(), x.end(), r.begin());
        }
        return r;
    };
    const Shape la = lift(a, b);
    const Shape lb = lift(b, a);
    Shape out(rank, 1);
    for (size_t k = 0; k < rank; ++k) {
        if (la[k] == lb[k] || lb[k] == 1)
            out[k] = la[k];
        else if (la[k] == 1)
            out[k] = lb[k];
        else
            incompatible(BroadcastRule::Ncnn, shapes,
                         detail::concat(la == a && lb == b ? std::string()
                                                           : "aligned as " + shape_str(la) + " and " + shape_str(lb) + ", ",
                                        "axis ", k, " has sizes ", la[k], " and ", lb[k]));
    }
    return make_broadcast_plan(out, {la, lb}, shapes);
}

BroadcastPlan broadcast_plan(BroadcastRule rule, const Shape& a, const Shape& b)
{
    switch (rule) {
    case BroadcastRule::Ncnn: return broadcast_ncnn(a, b);
    case BroadcastRule::Numpy: return broadcast_numpy(a, b);
    case BroadcastRule::Unidirectional: return broadcast_unidirectional(a, b);
    }
    fail("unknown broadcast rule ", static_cast<int>(rule));
}

BroadcastPlan broadcast_to(const Shape& in, const Shape& target)
{
    broadcast_unidirectional(target, in); // validates: in must stretch to target
    return make_broadcast_plan(target, {right_aligned(in, target.size())}, {in});
}

BroadcastPlan elementwise_plan(const Shape& shape)
{
    check_dims(shape);
    return make_broadcast_plan(shape, {shape}, {shape});
}

// ---------------------------------------------------------------------------

ParallelRunner::ParallelRunner(const ParallelContext& ctx) : ctx_(&ctx) {}

int ParallelRunner::threads() const { return ctx_ != nullptr ? ctx_->threads() : parallel_.threads; }

void ParallelRunner::run(int64_t n, const RangeFn& fn) const
{
    if (ctx_ != nullptr)
        ctx_->parallel_for(n, fn);
    else
        parallel_.for_range(n, fn);
}

// ---------------------------------------------------------------------------

KESTREL_KERNEL_FAMILY(BroadcastRowKernel, broadcast_row)

const SimdRowKernels* simd_row_kernels_f32(SimdBinary op)
{
    return op == SimdBinary::None ? nullptr : &broadcast_row_kernel().rows[static_cast<int>(op)];
}

} // namespace kestrel
