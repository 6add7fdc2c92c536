// The one resampling engine behind Interp (both its ncnn and ONNX forms):
// a resize is a list of axis steps, each a table of taps (source index and
// weight) per output index, applied one axis at a time (separably). The tap
// rules (ncnn's coordinates, ONNX's coordinate transforms) live in taps.h;
// this file only applies their tables.
#pragma once

#include <cstdint>
#include <vector>

#include "kestrel/op.h"

namespace kestrel {

// The taps of one resized axis: `per_output` taps for each of `out_len`
// output indices. An output index flagged in `outside` takes the fill value
// (ONNX's tf_crop_and_resize outside its roi).
struct AxisTaps {
    size_t axis = 0;
    int64_t out_len = 0;
    int per_output = 1;
    std::vector<int64_t> index; // out_len * per_output, each in [0, in_len)
    std::vector<float> weight;  // out_len * per_output
    std::vector<uint8_t> outside;

    void resize(int64_t len, int taps)
    {
        out_len = len;
        per_output = taps;
        index.assign(static_cast<size_t>(len * taps), 0);
        weight.assign(static_cast<size_t>(len * taps), 0.f);
    }
};

// The steps of one resize, in the order they are applied, and the scratch
// holding what lies between them (two buffers used in turn; -1 when forward
// allocates them itself, for a plan made at run time).
struct ResamplePlan : OpState {
    Shape out_shape;
    std::vector<AxisTaps> steps;
    int intermediate[2] = {-1, -1};

    // Asks `ctx` for the intermediate buffers these steps need.
    void request_scratch(const Shape& in_shape, PrepareContext& ctx);
    // Resizes `in` into `out` (of out_shape) step by step; no step copies.
    void run(const Tensor& in, Tensor& out, float fill, const ExecContext& ctx) const;
};

// One step on its own, from `src` (of src_shape) into `dst`, for float
// tensors and U8 pixels alike (sums in float; U8 stored rounded to nearest
// and saturated): instantiated for float and uint8_t in and out.
template <class In, class Out>
void apply_axis_taps(const In* src, const Shape& src_shape, Out* dst, const AxisTaps& taps, float fill,
                     const ExecContext& ctx);

} // namespace kestrel
