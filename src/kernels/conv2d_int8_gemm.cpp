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

int64_t conv2d_int8_gemm_totals(const Conv2dInt8Gemm& w, const Conv2dGemmGeometry& g)
{
    return w.packed.size() > 1 ? g.groups * g.outch_g * g.out_h * g.out_w : 0;
}

void conv2d_int8_gemm(const GemmKernel& kern, const Conv2dInt8Gemm& w, const Conv2dGemmGeometry& g, const float* x,
                      float* out, int32_t* totals, const std::function<void(int64_t, float*, int64_t)>& finish,
                      const ParallelContext& ctx)
{
    const int64_t plane_in = g.in_h * g.in_w, chunks = static_cast<int64_t>(w.packed.size());
    // Every chunk but the last adds its (exact) float sums into int32 totals
    // while they are in cache; the last adds the totals to its own.
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
        const int64_t c0 = chunk * w.chunk_channels;
        Conv2dGemmGeometry cg = g;
        cg.inch_g = std::min(w.chunk_channels, g.inch_g - c0);
        const bool first = chunk == 0, last = chunk == chunks - 1;
        conv2d_gemm(kern, cg, w.packed[static_cast<size_t>(chunk)].data(), x + c0 * plane_in, nullptr, out,
                    [&](int64_t oc, float* values, int64_t count) {
                        if (first && last) {
                            finish(oc, values, count);
                            return;
                        }
                        int32_t* t = totals + (values - out);
                        if (!last) {
                            for (int64_t j = 0; j < count; ++j)
                                t[j] = wrapping_add(first ? 0 : t[j], static_cast<int32_t>(values[j]));
                            return;
                        }
                        for (int64_t j = 0; j < count; ++j)
                            values[j] = static_cast<float>(wrapping_add(t[j], static_cast<int32_t>(values[j])));
                        finish(oc, values, count);
                    },
                    ctx);
    }
}

} // namespace kestrel
