// Int8 2-D convolution through the float GEMM (conv2d_gemm.h), exactly.
//
// Int8 values are exact floats, and a product of two is at most 2^14 in
// magnitude, so a sum of up to kInt8ExactDepth = 1024 products never leaves
// [-2^24, 2^24], where a float holds every integer: the float GEMM, with FMA or
// without, in any order, gives the int32 sum bit for bit. Deeper sums are cut
// along the input channels into chunks of at most that depth, one GEMM each,
// added up in int32. So the int8 layers run at the float GEMM's speed with the
// results of ncnn's int32 accumulation.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/conv2d_gemm.h"

namespace kestrel {

constexpr int64_t kInt8ExactDepth = 1024;

struct Conv2dInt8Gemm {
    int64_t chunk_channels = 0;              // input channels per chunk
    std::vector<std::vector<float>> packed;  // each chunk's weights, packed

    // Grouped layers take one chunk, so their depth must fit in it.
    static bool supported(const Conv2dGemmGeometry& g)
    {
        return g.kh * g.kw <= kInt8ExactDepth && (g.groups == 1 || g.depth() <= kInt8ExactDepth);
    }
};

// Int8 weights [groups*outch_g][inch_g][kh][kw] split into chunks and packed for kern.
Conv2dInt8Gemm conv2d_int8_gemm_prepare(const GemmKernel& kern, const int8_t* weights, const Conv2dGemmGeometry& g);

// The int32 convolution of x, the padded int8 input as floats
// [groups*inch_g][in_h][in_w] (g gives the input size), written to out
// [outch][out_h][out_w] as floats: static_cast<float>(sum), exact up to 2^24.
// finish(out_channel, values, count) runs on each finished piece of an output
// plane, in place (dequantization). `totals` holds conv2d_int8_gemm_totals(w, g)
// int32s (the running sums of a split depth; none when it is not split).
void conv2d_int8_gemm(const GemmKernel& kern, const Conv2dInt8Gemm& w, const Conv2dGemmGeometry& g, const float* x,
                      float* out, int32_t* totals, const std::function<void(int64_t, float*, int64_t)>& finish,
                      const ParallelContext& ctx);
int64_t conv2d_int8_gemm_totals(const Conv2dInt8Gemm& w, const Conv2dGemmGeometry& g);

} // namespace kestrel
