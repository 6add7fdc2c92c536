// Applying a ResamplePlan (see resample_plan.h).
#include "ops/resample/resample_plan.h"

#include <algorithm>

#include "core/saturate.h"
#include "kernels/resample_rows.h"
#include "kestrel/image.h"
#include "ops/common/op_util.h"

namespace kestrel {

namespace {

// The shape after each step but the last.
std::vector<Shape> intermediate_shapes(const Shape& in_shape, const std::vector<AxisTaps>& steps)
{
    std::vector<Shape> shapes;
    Shape current = in_shape;
    for (size_t i = 0; i + 1 < steps.size(); ++i) {
        current[steps[i].axis] = steps[i].out_len;
        shapes.push_back(current);
    }
    return shapes;
}

// A sum stored as the output's element type: U8 pixels rounded to nearest and saturated.
template <class Out> Out stored(float v) { return v; }
template <> uint8_t stored<uint8_t>(float v) { return saturate_pixel(v); }

// A step whose rows hold C interleaved values (the innermost axis: C = 1;
// the columns of an image's pixels: C = its channels): a row of outputs at a
// time, each C dot products of taps.
template <int C, class In, class Out>
void apply_to_interleaved(const In* src, int64_t in_len, int64_t outer, Out* dst, const AxisTaps& t, float fill,
                          const ExecContext& ctx)
{
    const int64_t out_len = t.out_len;
    const int taps = t.per_output;
    if (C == 1 && taps == 2 && t.outside.empty()) {
        // Linear along the innermost axis, the common case: the same sums
        // without the general loop's bookkeeping per output.
        ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
            const int64_t* index = t.index.data();
            const float* weight = t.weight.data();
            for (int64_t o = begin; o < end; ++o) {
                const In* base = src + o * in_len;
                Out* drow = dst + o * out_len;
                for (int64_t x = 0; x < out_len; ++x) {
                    float acc = base[index[2 * x]] * weight[2 * x];
                    acc += base[index[2 * x + 1]] * weight[2 * x + 1];
                    drow[x] = stored<Out>(acc);
                }
            }
        });
        return;
    }
    ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
            const In* base = src + o * in_len * C;
            Out* drow = dst + o * out_len * C;
            for (int64_t x = 0; x < out_len; ++x) {
                if (!t.outside.empty() && t.outside[static_cast<size_t>(x)]) {
                    for (int c = 0; c < C; ++c) drow[x * C + c] = stored<Out>(fill);
                    continue;
                }
                const int64_t* index = t.index.data() + x * taps;
                const float* weight = t.weight.data() + x * taps;
                float acc[C];
                for (int c = 0; c < C; ++c) acc[c] = base[index[0] * C + c] * weight[0];
                for (int k = 1; k < taps; ++k)
                    for (int c = 0; c < C; ++c) acc[c] += base[index[k] * C + c] * weight[k];
                for (int c = 0; c < C; ++c) drow[x * C + c] = stored<Out>(acc[c]);
            }
        }
    });
}

} // namespace

// One step: every output row (an output index of the axis, for each outer
// index) is the weighted sum of its source rows of `inner` values, summed in
// tap order from the first tap's product.
template <class In, class Out>
void apply_axis_taps(const In* src, const Shape& src_shape, Out* dst, const AxisTaps& t, float fill,
                     const ExecContext& ctx)
{
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < t.axis; ++i) outer *= src_shape[i];
    for (size_t i = t.axis + 1; i < src_shape.size(); ++i) inner *= src_shape[i];
    const int64_t in_len = src_shape[t.axis], out_len = t.out_len;
    const int taps = t.per_output;
    switch (inner) {
    case 1: return apply_to_interleaved<1>(src, in_len, outer, dst, t, fill, ctx);
    case 2: return apply_to_interleaved<2>(src, in_len, outer, dst, t, fill, ctx);
    case 3: return apply_to_interleaved<3>(src, in_len, outer, dst, t, fill, ctx);
    case 4: return apply_to_interleaved<4>(src, in_len, outer, dst, t, fill, ctx);
    default: break;
    }
    // Every output row is a weighted sum of whole input rows: the vector kernel.
    const auto sum_rows = resample_rows_kernel().*ResampleRowsEntry<In, Out>::of;
    ctx.parallel_for(outer * out_len, [&](int64_t begin, int64_t end) {
        // The taps' rows: on the stack for the usual few taps.
        const In* few[16];
        std::vector<const In*> many(taps > 16 ? static_cast<size_t>(taps) : 0);
        const In** rows = taps > 16 ? many.data() : few;
        for (int64_t r = begin; r < end; ++r) {
            const int64_t o = r / out_len, x = r % out_len;
            Out* drow = dst + r * inner;
            if (!t.outside.empty() && t.outside[static_cast<size_t>(x)]) {
                std::fill(drow, drow + inner, stored<Out>(fill));
                continue;
            }
            const int64_t* index = t.index.data() + x * taps;
            const In* base = src + o * in_len * inner;
            for (int k = 0; k < taps; ++k) rows[k] = base + index[k] * inner;
            sum_rows(rows, t.weight.data() + x * taps, taps, inner, drow);
        }
    });
}

template void apply_axis_taps(const float*, const Shape&, float*, const AxisTaps&, float, const ExecContext&);
template void apply_axis_taps(const uint8_t*, const Shape&, float*, const AxisTaps&, float, const ExecContext&);
template void apply_axis_taps(const float*, const Shape&, uint8_t*, const AxisTaps&, float, const ExecContext&);
template void apply_axis_taps(const uint8_t*, const Shape&, uint8_t*, const AxisTaps&, float, const ExecContext&);

void ResamplePlan::request_scratch(const Shape& in_shape, PrepareContext& ctx)
{
    int64_t largest = 0;
    for (const Shape& s : intermediate_shapes(in_shape, steps)) largest = std::max(largest, shape_numel(s));
    if (largest > 0)
        for (int& buffer : intermediate) buffer = ctx.request_scratch(largest * 4);
}

void ResamplePlan::run(const Tensor& in, Tensor& out, float fill, const ExecContext& ctx) const
{
    if (steps.empty()) {
        std::copy_n(in.data<float>(), in.numel(), out.data<float>());
        return;
    }
    const std::vector<Shape> shapes = intermediate_shapes(in.shape(), steps);
    // Through two intermediate buffers in turn, the last step into the output.
    Tensor current = in;
    for (size_t i = 0; i < steps.size(); ++i) {
        const int buffer = intermediate[i % 2];
        Tensor next = i + 1 == steps.size() ? out
                      : buffer >= 0          ? Tensor::wrap(ctx.scratch(buffer), shapes[i])
                                             : Tensor(shapes[i], DType::F32);
        apply_axis_taps(current.data<float>(), current.shape(), next.data<float>(), steps[i], fill, ctx);
        current = next;
    }
}

} // namespace kestrel
