#include "kernels/conv2d_int8_gemm.h"

#include <algorithm>

namespace kestrel {

namespace {

// int32 addition that wraps as ncnn's accumulators do in practice, without
// signed overflow (a malformed model may declare depths that overflow).
int32_t wrapping_add(int32_t a, int32_t b)
{
    return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

} // namespace

Conv2dInt8Gemm conv2d_int8_gemm_prepare(const GemmKernel& kern, const int8_t* weights, const Conv2dGemmGeometry& g)
{
    Conv2dInt8Gemm w;
    w.shape = g;
    const int64_t taps = g.kh * g.kw;
    w.chunk_channels = g.groups == 1 ? std::min(g.inch_g, kInt8ExactDepth / taps) : g.inch_g;
    const int64_t outch = g.groups * g.outch_g;
    for (int64_t c0 = 0; c0 < g.inch_g; c0 += w.chunk_channels) {
        const int64_t channels = std::min(w.chunk_channels, g.inch_g - c0);
        // This chunk's weights [outch][channels][kh][kw], as floats.
        std::vector<float> part(static_cast<size_t>(outch * channels * taps));
        for (int64_t oc = 0; oc < outch; ++oc) {
            const int8_t* src = weights + (oc * g.inch_g + c0) * taps;
            std::copy(src, src + channels * taps, part.begin() + oc * channels * taps);
        }
        Conv2dGemmGeometry cg = g;
        cg.inch_g = channels;
        w.packed.push_back(conv2d_gemm_pack_weights(kern, part.data(), cg));
    }
    return w;
}

void conv2d_int8_gemm(const GemmKernel& kern, const Conv2dInt8Gemm& w, const Conv2dGemmGeometry& g, const float* x,
                      int32_t* sums, const ExecContext& ctx)
{
    const int64_t plane_in = g.in_h * g.in_w;
    std::vector<float> part(static_cast<size_t>(g.groups * g.outch_g * g.out_h * g.out_w));
    float* base = part.data();
    for (size_t chunk = 0; chunk < w.packed.size(); ++chunk) {
        const int64_t c0 = static_cast<int64_t>(chunk) * w.chunk_channels;
        Conv2dGemmGeometry cg = g;
        cg.inch_g = std::min(w.chunk_channels, g.inch_g - c0);
        // Each finished piece of the chunk's (exact) float sums goes into the
        // int32 sums while it is still in cache.
        const bool first = chunk == 0;
        conv2d_gemm(kern, cg, w.packed[chunk].data(), x + c0 * plane_in, nullptr, base,
                    [&](int64_t, float* values, int64_t count) {
                        int32_t* s = sums + (values - base);
                        for (int64_t j = 0; j < count; ++j)
                            s[j] = wrapping_add(first ? 0 : s[j], static_cast<int32_t>(values[j]));
                    },
                    ctx);
    }
}

} // namespace kestrel
