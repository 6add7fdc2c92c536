// bfloat16 2-D convolution on the bfloat16 GEMM (bf16_gemm.h), for
// Options::precision BF16: weights and inputs rounded to bfloat16, sums in
// fp32, started at the bias.
//
// The input is laid out once per run as channel pairs (conv2d_bf16_input):
// word planes split by stride phase (conv2d_phase_planes.h), each word the
// bfloat16 values of 2 consecutive channels at one padded pixel. A group's
// word planes are rounded up to the kernel's blocks of words (zero planes
// past its channels), so that a block of the GEMM's depth (tap, word plane)
// lies within one tap, its words one plane apart: AMX loads a block as one
// tile of B at that stride.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/bf16_gemm.h"
#include "kernels/conv2d_gemm.h"
#include "kernels/conv2d_phase_planes.h"

namespace kestrel {

struct Conv2dBf16 {
    std::vector<uint16_t> packed; // group after group, bf16_gemm_pack_a of its weights in (tap, word plane) order
    std::vector<float> bias;      // per output channel (zeros for none)
    int64_t group_values = 0;     // of packed, per group
    int64_t word_planes = 0;      // per group: ceil(inch_g / 2), rounded up to the kernel's blocks
};

// Weights [groups*outch_g][inch_g][kh][kw], bias [groups*outch_g] or nullptr.
Conv2dBf16 conv2d_bf16_prepare(const Bf16GemmKernel& kern, const float* weights, const float* bias,
                               const Conv2dGemmGeometry& g);

// Words of the laid-out input for g (its word planes, and one panel's worth
// of words after them, which the last panel's tiles read).
int64_t conv2d_bf16_input_words(const Bf16GemmKernel& kern, const Conv2dGemmGeometry& g);

// x, float planes [groups*inch_g][h][w], laid out into dst as channel pairs of
// g's padded planes (g.in_h x g.in_w), x's pixel (0, 0) at (pad_top,
// pad_left) and `pad` around it.
void conv2d_bf16_input(const Bf16GemmKernel& kern, const Conv2dBf16& w, const Conv2dGemmGeometry& g, const float* x,
                       int64_t h, int64_t width, int64_t pad_top, int64_t pad_left, float pad, uint32_t* dst,
                       const ParallelContext& ctx);

// Each depth word's byte offset (conv2d_phase_planes.h), per shape.
std::vector<int64_t> conv2d_bf16_offsets(const Conv2dGemmGeometry& g, const Conv2dBf16& w);

// The fp32 sums (bias included) of the convolution of the laid-out input,
// handed to finish piece by piece (phase_planes_gemm).
using Bf16SumsFinished = PhaseSumsFinished<float>;
void conv2d_bf16(const Bf16GemmKernel& kern, const Conv2dBf16& w, const Conv2dGemmGeometry& g,
                 const std::vector<int64_t>& offsets, const uint32_t* input, const Bf16SumsFinished& finish,
                 const ParallelContext& ctx);

} // namespace kestrel
