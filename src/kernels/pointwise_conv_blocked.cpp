#include "kernels/pointwise_conv_blocked.h"

#include <cstddef>

#include "kernels/isa.h"

namespace kestrel {

KESTREL_KERNEL_FAMILY(PointwiseBlockedKernel, pointwise_blocked)

std::vector<float> pack_pointwise_weights(const float* w, int64_t out_ch, int64_t in_ch, int64_t block)
{
    const int64_t panels = (out_ch + block - 1) / block;
    // Zero-initialized: the lanes past out_ch stay 0, so those outputs are the (zero) bias.
    std::vector<float> packed(static_cast<size_t>(panels * in_ch * block), 0.f);
    for (int64_t o = 0; o < out_ch; ++o) {
        float* panel = packed.data() + (o / block) * in_ch * block + o % block;
        for (int64_t c = 0; c < in_ch; ++c) panel[c * block] = w[o * in_ch + c];
    }
    return packed;
}

} // namespace kestrel
