// Int8 2-D convolution on the int8 GEMM (int8_gemm.h), for CPUs with
// dot-product instructions (AVX512-VNNI).
//
// The input is laid out once per run as channel quads
// (conv2d_int8_dot_input): word planes split by stride phase
// (conv2d_phase_planes.h), each word the bytes of 4 consecutive channels at
// one padded pixel, offset by 128 (B is unsigned; each weight row's sum times
// -128 starts its sums, so they are the int32 sums of the signed values).
// Integer sums wrap as int32, as ncnn's accumulators do.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/conv2d_gemm.h"
#include "kernels/conv2d_phase_planes.h"
#include "kernels/int8_gemm.h"

namespace kestrel {

struct Conv2dInt8Dot {
    const Int8GemmKernel* kern = nullptr; // the kernel it was prepared for
    std::vector<int8_t> packed;  // group after group, int8_gemm_pack_a of its weights in (tap, quad) order
    std::vector<int32_t> start;  // per output channel: -128 * the sum of its weights
    int64_t group_bytes = 0;     // of packed, per group
    int64_t channel_quads = 0;   // per group: ceil(inch_g / 4), rounded up to the kernel's blocks
};

// Weights [groups*outch_g][inch_g][kh][kw]; g's split_columns and wide_rows
// are ignored (the layout is this kernel's own).
Conv2dInt8Dot conv2d_int8_dot_prepare(const Int8GemmKernel& kern, const int8_t* weights, const Conv2dGemmGeometry& g);

// Bytes of the laid-out input for g (padded planes of words, and one panel's
// worth of words after them, which the last panel's tiles read).
int64_t conv2d_int8_dot_input_bytes(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g);

// x, int8 planes [groups*inch_g][h][w], laid out into dst as channel quads of
// g's padded planes (g.in_h x g.in_w), x's pixel (0, 0) at (pad_top,
// pad_left) and `pad` around it.
void conv2d_int8_dot_input(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g, const int8_t* x, int64_t h,
                           int64_t w, int64_t pad_top, int64_t pad_left, int8_t pad, uint8_t* dst,
                           const ParallelContext& ctx);
// The same from uint8 planes whose values u stand for the int8 values u - 128
// (ONNX's uint8 inputs): their bytes are the kernel's unsigned operand as
// they are. `pad` is the int8 value the padding stands for.
void conv2d_int8_dot_input(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g, const uint8_t* x, int64_t h,
                           int64_t w, int64_t pad_top, int64_t pad_left, int8_t pad, uint8_t* dst,
                           const ParallelContext& ctx);
// The same from float planes, quantized with `scale` (Int8OutputKernel::quantize's rounding) as they are laid out.
void conv2d_int8_dot_input(const Int8GemmKernel& kern, const Conv2dGemmGeometry& g, const float* x, float scale,
                           int64_t h, int64_t w, int64_t pad_top, int64_t pad_left, int8_t pad, uint8_t* dst,
                           const ParallelContext& ctx);

// Each quad's byte offset from a pixel's word in its group's laid-out input,
// in the GEMM's depth order (tap, quad): per shape, computed when a layer is
// prepared.
std::vector<int64_t> conv2d_int8_dot_offsets(const Conv2dGemmGeometry& g, const Conv2dInt8Dot& w);

// The int32 sums of the convolution of the laid-out input (quad `offsets`
// from conv2d_int8_dot_offsets), output channel
// `channel`'s pixels [pixel, pixel + count) (of out_h x out_w) handed to
// finish(channel, pixel, sums, count) piece by piece, each piece once.
using Int8SumsFinished = PhaseSumsFinished<int32_t>;
void conv2d_int8_dot(const Int8GemmKernel& kern, const Conv2dInt8Dot& w, const Conv2dGemmGeometry& g,
                     const std::vector<int64_t>& offsets, const uint8_t* input, const Int8SumsFinished& finish,
                     const ParallelContext& ctx);

} // namespace kestrel
