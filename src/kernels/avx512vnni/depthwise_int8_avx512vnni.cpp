// The int8 depthwise kernel on AVX512-VNNI (depthwise_int8.h): 16 outputs of
// a row at a time. For each kernel row, one 64-byte load; vpermd gives 128-bit
// lane L the source's bytes from 4 * stride_w * L (the inputs of outputs
// 4L..4L+3), vpshufb gathers each output's taps into its int32 lane, and
// vpdpbusd adds their products with the kernel row's weights.
#include <immintrin.h>

#include "kernels/depthwise_int8.h"

namespace kestrel::detail {

namespace {

void plane(const Depthwise2dGeometry& g, const uint8_t* padded, int64_t row_bytes, const int8_t* weights,
           int32_t start, int32_t* sums)
{
    const int s = static_cast<int>(g.stride_w), d = static_cast<int>(g.dilation_w), kw = static_cast<int>(g.kw);
    const __m512i lanes = _mm512_setr_epi32(0, 1, 2, 3, s, s + 1, s + 2, s + 3, 2 * s, 2 * s + 1, 2 * s + 2,
                                            2 * s + 3, 3 * s, 3 * s + 1, 3 * s + 2, 3 * s + 3);
    alignas(16) int8_t taps[16];
    for (int j = 0; j < 4; ++j)
        for (int t = 0; t < 4; ++t) taps[4 * j + t] = static_cast<int8_t>(t < kw ? s * j + t * d : -1); // -1: zero
    const __m512i gather = _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(taps)));
    __m512i row_weights[64];
    for (int64_t ky = 0; ky < g.kh; ++ky) {
        uint32_t quad = 0;
        for (int t = 0; t < kw; ++t) quad |= static_cast<uint32_t>(static_cast<uint8_t>(weights[ky * kw + t])) << (8 * t);
        row_weights[ky] = _mm512_set1_epi32(static_cast<int32_t>(quad));
    }
    for (int64_t oy = 0; oy < g.out_h; ++oy) {
        const uint8_t* rows = padded + oy * g.stride_h * row_bytes;
        for (int64_t ox = 0; ox < g.out_w; ox += 16) {
            __m512i acc = _mm512_set1_epi32(start);
            const uint8_t* at = rows + ox * s;
            for (int64_t ky = 0; ky < g.kh; ++ky) {
                const __m512i v = _mm512_loadu_si512(at + ky * g.dilation_h * row_bytes);
                const __m512i quads = _mm512_shuffle_epi8(_mm512_permutexvar_epi32(lanes, v), gather);
                acc = _mm512_dpbusd_epi32(acc, quads, row_weights[ky]);
            }
            const int64_t n = g.out_w - ox < 16 ? g.out_w - ox : 16;
            _mm512_mask_storeu_epi32(sums + oy * g.out_w + ox, static_cast<__mmask16>((1u << n) - 1), acc);
        }
    }
}

} // namespace

const DepthwiseInt8Kernel& depthwise_int8_kernel_avx512vnni()
{
    static const DepthwiseInt8Kernel k{"avx512vnni", plane};
    return k;
}

} // namespace kestrel::detail
