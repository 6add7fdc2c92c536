#include "kernels/conv2d_blocked.h"

#include <algorithm>
#include <cstddef>

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(Conv2dBlockedKernel, conv2d_blocked)

Conv2dBlockedProblem pointwise_problem(int64_t in_ch, int64_t out_ch, int64_t pixels)
{
    Conv2dBlockedProblem p{};
    p.in_ch = in_ch, p.out_ch = out_ch;
    p.in_h = p.out_h = 1;
    p.in_w = p.out_w = pixels;
    return p;
}

std::vector<float> pack_conv2d_blocked_weights(const float* w, int64_t out_ch, int64_t in_ch, int64_t taps,
                                               int64_t block)
{
    const int64_t panels = (out_ch + block - 1) / block, panel = in_ch * taps * block;
    // Zero-initialized: the lanes past out_ch stay 0, so those outputs are the (zero) bias.
    std::vector<float> packed(static_cast<size_t>(panels * panel), 0.f);
    for (int64_t o = 0; o < out_ch; ++o)
        for (int64_t c = 0; c < in_ch; ++c) {
            const int64_t c0 = c / block * block, lanes = std::min(block, in_ch - c0);
            float* dst = packed.data() + (o / block) * panel + (c0 * taps + c - c0) * block + o % block;
            for (int64_t t = 0; t < taps; ++t) dst[t * lanes * block] = w[(o * in_ch + c) * taps + t];
        }
    return packed;
}

} // namespace kestrel
