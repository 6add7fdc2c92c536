// The driver both dot-product GEMMs share (int8_gemm.h, bf16_gemm.h): C
// (m x n, row stride ldc) from packed A panels (`a_panel` values each) and
// packed B panels (`b_panel_bytes` each, its words nr * 4 bytes apart), in
// tasks of column panels split across ctx's threads, each over every row
// panel; init per row of C (nullptr: zeros, bfloat16 only).
#pragma once
#include <algorithm>
#include <cstdint>

#include "kernels/int8_gemm.h"

namespace kestrel {

template <class Kernel, class A, class Sum>
void dot_gemm_panels(const Kernel& kern, int64_t m, int64_t n, int64_t words, const A* a_packed, int64_t a_panel,
                     const Sum* init, const uint8_t* b_packed, int64_t b_panel_bytes, Sum* c, int64_t ldc,
                     const ParallelContext& ctx)
{
    if (m <= 0 || n <= 0) return;
    const int64_t row_panels = (m + kern.mr - 1) / kern.mr, col_panels = (n + kern.nr - 1) / kern.nr;
    ctx.parallel_for(col_panels, [&](int64_t begin, int64_t end) {
        for (int64_t cp = begin; cp < end; ++cp) {
            const int64_t j0 = cp * kern.nr;
            const int cols = static_cast<int>(std::min<int64_t>(kern.nr, n - j0));
            for (int64_t p = 0; p < row_panels; ++p) {
                const int64_t i0 = p * kern.mr;
                const int rows = static_cast<int>(std::min<int64_t>(kern.mr, m - i0));
                kern.tile(words, a_packed + p * a_panel, WordPanel{b_packed + cp * b_panel_bytes, kern.nr * 4, nullptr},
                          init ? init + i0 : nullptr, c + i0 * ldc + j0, ldc, rows, cols);
            }
        }
    });
}

} // namespace kestrel
