// A convolution's padded input: planes of h x w pixels (each `width` values:
// 1 in planes, a channel block's B when blocked) copied into planes of
// ph x pw pixels at (top, left), `value` around them inside the layer's own
// padded extent (own_h x own_w pixels) and 0 past it (Winograd's whole
// tiles: a large pad value there would cost its neighbours their precision),
// plane by plane over the threads. Any value type (float, int8).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kestrel/op.h"

namespace kestrel {

template <class T>
void pad_planes(const T* x, int64_t planes, int64_t width, int64_t h, int64_t w, int64_t top, int64_t left, T value,
                int64_t own_h, int64_t own_w, T* dst, int64_t ph, int64_t pw, const ExecContext& ctx)
{
    ctx.parallel_for(planes, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const T* src = x + p * h * w * width;
            T* plane = dst + p * ph * pw * width;
            for (int64_t y = 0; y < ph; ++y) {
                T* row = plane + y * pw * width;
                if (y >= own_h) {
                    std::fill(row, row + pw * width, T(0));
                    continue;
                }
                const bool inside = y >= top && y < top + h;
                const int64_t copied_end = inside ? left + w : left; // pixels [left, copied_end) come from x
                std::fill(row, row + left * width, value);
                if (inside) std::memcpy(row + left * width, src + (y - top) * w * width, sizeof(T) * w * width);
                std::fill(row + copied_end * width, row + own_w * width, value);
                std::fill(row + own_w * width, row + pw * width, T(0));
            }
        }
    });
}

} // namespace kestrel
