// 1x1 convolution (a pointwise layer: every output pixel a weighted sum of the
// input channels at that pixel) on channel-blocked activations, one kernel per
// ISA from the template in pointwise_conv_blocked_impl.h.
//
// Channel-blocked layout with block B (the ISA's vector width: 4 generic, 8
// AVX2, 16 AVX-512): C channels x P pixels as [ceil(C/B)][P][B], value (c, p)
// at ((c / B) * P + p) * B + c % B. A pixel's B channels are then one vector,
// so a register tile of pixels x output blocks is filled by broadcasting one
// input value and multiply-adding a vector of B output channels' weights; no
// transposes between layers. Lanes past C in the last block are padding: their
// input content is unspecified (never read as data), outputs write zeros there.
// The planes layout [C][P] (value (c, p) at c * P + p) is taken on either side,
// for the layers next to ones that keep planes.
#pragma once
#include <cstdint>
#include <vector>

namespace kestrel {

struct PointwiseProblem {
    const float* x; // input, blocked or planes (x_blocked)
    bool x_blocked;
    int64_t in_ch, out_ch, pixels;
    const float* packed; // pack_pointwise_weights(...) for this kernel's block
    const float* bias;   // ceil(out_ch/B)*B values, zero past out_ch; never null (caller passes zeros)
    float* y;            // output, blocked or planes (y_blocked)
    bool y_blocked;
    // {lo, hi}: each sum clamped, std::min(std::max(v, lo), hi), before it is
    // stored (ReLU, ReLU6 and Clip fused: the same bits as after it); none: nullptr.
    const float* clamp = nullptr;
};

struct PointwiseBlockedKernel {
    const char* isa;
    int64_t block; // B
    // Output channel blocks [ob0, ob1) x pixels [p0, p1):
    //   y[o][p] = bias[o] + sum over c = 0..in_ch-1, in that order, of w[o][c] * x[c][p]
    // Blocked y: whole blocks are written, lanes past out_ch get 0 (zero weights and bias).
    // Planes y: only channels < out_ch are written.
    // Nothing outside the range is written, so threads may split blocks and pixels.
    void (*run)(const PointwiseProblem& p, int64_t ob0, int64_t ob1, int64_t p0, int64_t p1);
};

// w is [out_ch][in_ch] row-major; returns ceil(out_ch/block) panels of [in_ch][block] (zeros past out_ch).
std::vector<float> pack_pointwise_weights(const float* w, int64_t out_ch, int64_t in_ch, int64_t block);

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const PointwiseBlockedKernel& pointwise_blocked_kernel();
std::vector<const PointwiseBlockedKernel*> pointwise_blocked_kernels_available();

} // namespace kestrel
