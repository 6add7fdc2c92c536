// Applying a ResamplePlan (see resample_plan.h).
#include "ops/resample/resample_plan.h"

#include <algorithm>

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

// One step: every output row (an output index of the axis, for each outer
// index) is the weighted sum of its source rows of `inner` values, summed in
// tap order from the first tap's product.
void apply_axis(const float* src, const Shape& src_shape, float* dst, const AxisTaps& t, float fill,
                const ExecContext& ctx)
{
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < t.axis; ++i) outer *= src_shape[i];
    for (size_t i = t.axis + 1; i < src_shape.size(); ++i) inner *= src_shape[i];
    const int64_t in_len = src_shape[t.axis], out_len = t.out_len;
    const int taps = t.per_output;
    if (inner == 1) {
        // The innermost axis: a row of outputs at a time, each a dot product of taps.
        ctx.parallel_for(outer, [&](int64_t begin, int64_t end) {
            for (int64_t o = begin; o < end; ++o) {
                const float* base = src + o * in_len;
                float* drow = dst + o * out_len;
                for (int64_t x = 0; x < out_len; ++x) {
                    if (!t.outside.empty() && t.outside[static_cast<size_t>(x)]) {
                        drow[x] = fill;
                        continue;
                    }
                    const int64_t* index = t.index.data() + x * taps;
                    const float* weight = t.weight.data() + x * taps;
                    float acc = base[index[0]] * weight[0];
                    for (int k = 1; k < taps; ++k) acc += base[index[k]] * weight[k];
                    drow[x] = acc;
                }
            }
        });
        return;
    }
    ctx.parallel_for(outer * out_len, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t o = r / out_len, x = r % out_len;
            float* drow = dst + r * inner;
            if (!t.outside.empty() && t.outside[static_cast<size_t>(x)]) {
                std::fill(drow, drow + inner, fill);
                continue;
            }
            const int64_t* index = t.index.data() + x * taps;
            const float* weight = t.weight.data() + x * taps;
            const float* base = src + o * in_len * inner;
            const float* s0 = base + index[0] * inner;
            for (int64_t i = 0; i < inner; ++i) drow[i] = s0[i] * weight[0];
            for (int k = 1; k < taps; ++k) {
                const float* s = base + index[k] * inner;
                const float w = weight[k];
                for (int64_t i = 0; i < inner; ++i) drow[i] += s[i] * w;
            }
        }
    });
}

} // namespace

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
        apply_axis(current.data<float>(), current.shape(), next.data<float>(), steps[i], fill, ctx);
        current = next;
    }
}

} // namespace kestrel
