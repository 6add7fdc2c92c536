// The int8 max-pooling kernel on AVX-512 BW (max_pool_int8.h). A plane goes
// by chunks of 64 outputs (columns), each down all output rows, so the
// masks of its loads are set once; stride 2 takes two 64-byte loads per
// window pair of taps, its 16-bit maxima packed back to 64 bytes.
#include <immintrin.h>

#include <algorithm>

#include "kernels/max_pool_int8.h"

namespace kestrel::detail {

namespace {

constexpr int64_t kMaxLoads = 32; // per window row: kernel_w <= 16 taps, two loads each at stride 2

// One load of a chunk's row: 64 bytes from column x, those outside [0, w)
// as -128 (masked off, so not read: no fault past the plane).
struct RowLoad {
    int64_t x = 0;
    __mmask64 inside = 0;
    bool whole = false;

    RowLoad() = default;
    RowLoad(int64_t x_, int64_t w) : x(x_)
    {
        const int64_t lo = std::clamp<int64_t>(-x, 0, 64), hi = std::clamp<int64_t>(w - x, 0, 64);
        const __mmask64 below_hi = hi == 64 ? ~__mmask64{0} : (__mmask64{1} << hi) - 1;
        inside = lo >= hi ? 0 : below_hi & ~((__mmask64{1} << lo) - 1);
        whole = lo == 0 && hi == 64;
    }
    __m512i operator()(const int8_t* row) const
    {
        if (whole) return _mm512_loadu_si512(row + x);
        return _mm512_mask_loadu_epi8(_mm512_set1_epi8(-128), inside, row + x);
    }
};

// The window's maxima along one row for 32 outputs of stride 2 whose first
// window starts at load 0's column: word i of the load at x + k holds taps
// k and k + 1 of output i. (Inlined, so that a constant kw unrolls.)
__attribute__((always_inline)) inline __m512i stride2_maxima(const RowLoad* loads, int64_t kw, const int8_t* row,
                                                             __m512i m)
{
    for (int64_t k = 0; k < kw; k += 2) {
        const __m512i v = loads[k / 2](row);
        m = _mm512_max_epi16(m, _mm512_srai_epi16(_mm512_slli_epi16(v, 8), 8));
        if (k + 1 < kw) m = _mm512_max_epi16(m, _mm512_srai_epi16(v, 8));
    }
    return m;
}

__mmask64 first_lanes(int64_t n) { return n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1; }

// KW: the kernel's width as a constant (its loops unrolled), or 0.
template <int KW> void plane_of(const int8_t* p, int8_t* o, const Pool2dGeometry& g)
{
    const int64_t kw = KW ? KW : g.kernel_w, w = g.in_w, pair_loads = (kw + 1) / 2;
    RowLoad loads[kMaxLoads];
    for (int64_t ox0 = 0; ox0 < g.out_w; ox0 += 64) {
        const int64_t n = std::min<int64_t>(64, g.out_w - ox0), x0 = ox0 * g.stride_w - g.pad_left;
        if (g.stride_w == 1)
            for (int64_t k = 0; k < kw; ++k) loads[k] = RowLoad(x0 + k, w);
        else // outputs [ox0, +32) from loads [0, pair_loads), [ox0 + 32, +32) from the rest
            for (int64_t k = 0; k < kw; k += 2) {
                loads[k / 2] = RowLoad(x0 + k, w);
                loads[pair_loads + k / 2] = RowLoad(x0 + 64 + k, w);
            }
        for (int64_t oy = 0; oy < g.out_h; ++oy) {
            const int64_t y0 = oy * g.stride_h - g.pad_top;
            const int64_t y_begin = std::max<int64_t>(0, y0), y_end = std::min(g.in_h, y0 + g.kernel_h);
            __m512i m;
            if (g.stride_w == 1) {
                m = _mm512_set1_epi8(-128);
                for (int64_t y = y_begin; y < y_end; ++y)
                    for (int64_t k = 0; k < kw; ++k) m = _mm512_max_epi8(m, loads[k](p + y * w));
            } else {
                __m512i lo = _mm512_set1_epi16(-128), hi = lo;
                for (int64_t y = y_begin; y < y_end; ++y) {
                    lo = stride2_maxima(loads, kw, p + y * w, lo);
                    if (n > 32) hi = stride2_maxima(loads + pair_loads, kw, p + y * w, hi);
                }
                // Packed per 128-bit lane (8 of lo's words, then 8 of hi's), then lo's 32 bytes first.
                m = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), _mm512_packs_epi16(lo, hi));
            }
            _mm512_mask_storeu_epi8(o + oy * g.out_w + ox0, first_lanes(n), m);
        }
    }
}

void plane(const int8_t* p, int8_t* o, const Pool2dGeometry& g)
{
    if (g.kernel_w == 2) return plane_of<2>(p, o, g);
    if (g.kernel_w == 3) return plane_of<3>(p, o, g);
    plane_of<0>(p, o, g);
}

} // namespace

const Int8MaxPoolKernel& int8_max_pool_kernel_avx512()
{
    static const Int8MaxPoolKernel k{"avx512", plane};
    return k;
}

} // namespace kestrel::detail
