// 2-D convolution as one GEMM per group (gemm.h): the weights of a group are
// A (out channels x in channels*kh*kw, ncnn's weight order), and the image-to-
// column view of the padded input is B (in channels*kh*kw x output pixels),
// packed panel by panel straight from the input without a full column buffer.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/gemm.h"

namespace kestrel {

struct Conv2dGemmGeometry {
    int64_t groups = 1, inch_g = 0, outch_g = 0; // channels per group
    int64_t in_h = 0, in_w = 0;                  // the padded input plane
    int64_t out_h = 0, out_w = 0;
    int64_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
    // Each padded input row stored as its even columns, then its odd ones
    // (conv2d_gemm_input_row): a stride-2 kernel then reads every tap's
    // columns contiguously, so the GEMM can take them in place.
    bool split_columns = false;
    // Outputs computed across the padded input's whole rows (stride 1, see
    // conv2d_gemm_wants_wide_rows): pixel p = oy * in_w + ox, so every tap's
    // panel is a contiguous run of the input, read in place and never packed;
    // the columns past out_w are dropped as the rows are copied out.
    bool wide_rows = false;

    int64_t depth() const { return inch_g * kh * kw; } // GEMM k
    // The GEMM's columns with wide rows: up to the last output's pixel.
    int64_t wide_columns() const { return (out_h - 1) * in_w + out_w; }
    // Where column x of a padded row lies.
    int64_t column(int64_t x) const { return split_columns ? (x & 1) * ((in_w + 1) / 2) + x / 2 : x; }
};

// Whether conv2d_gemm reads a layer of GEMM depth `depth` (in channels x
// kernel taps) in place, where panels allow it, rather than packing its columns.
bool conv2d_gemm_reads_in_place(int64_t depth);
// Whether g's layer is faster with wide rows: stride 1 and padded (or a
// kernel wider than 1) rows, and too few output channels per group to repay
// packing columns (grouped layers of 8 channels: regnet's).
bool conv2d_gemm_wants_wide_rows(const GemmKernel& kern, const Conv2dGemmGeometry& g);
// Whether conv2d_gemm wants the rows of g's input split (its split_columns).
bool conv2d_gemm_wants_split_columns(const Conv2dGemmGeometry& g);
// One padded input row as g lays it out: in_w values, pad_left of `pad`, the
// w values of `src`, then `pad` again.
void conv2d_gemm_input_row(const Conv2dGemmGeometry& g, const float* src, int64_t w, int64_t pad_left, float pad,
                           float* dst);

// Weights [groups*outch_g][inch_g][kh][kw] packed for `kern`, group after group.
std::vector<float> conv2d_gemm_pack_weights(const GemmKernel& kern, const float* weights,
                                            const Conv2dGemmGeometry& g);
// The same into `dst` (conv2d_gemm_packed_floats(kern, g) floats), for weights
// that arrive as an input.
void conv2d_gemm_pack_weights_into(const GemmKernel& kern, const float* weights, const Conv2dGemmGeometry& g,
                                   float* dst);
int64_t conv2d_gemm_packed_floats(const GemmKernel& kern, const Conv2dGemmGeometry& g);

// y [groups*outch_g][out_h][out_w] = bias + convolution of x [groups*inch_g][in_h][in_w]
// (already padded, and laid out as g.split_columns says). post(out_channel, values, count) runs on each finished
// piece of an output plane (the fused activation); it may be empty. `clamp`
// (see GemmKernel::tile) bounds the values before post sees them. With
// g.wide_rows, `wide` holds outch_g * g.wide_columns() floats of scratch,
// unless the groups run in parallel (conv2d_gemm_groups_in_parallel: many
// groups, each on one thread; they keep their own).
bool conv2d_gemm_groups_in_parallel(const Conv2dGemmGeometry& g, int threads);
void conv2d_gemm(const GemmKernel& kern, const Conv2dGemmGeometry& g, const float* packed_weights, const float* x,
                 const float* bias, float* y, const std::function<void(int64_t, float*, int64_t)>& post,
                 const ParallelContext& ctx, const float* clamp = nullptr, float* wide = nullptr);

} // namespace kestrel
