// Direct 2-D convolution (one group: every output channel a weighted sum of
// every input channel over the kernel's window) on channel-blocked
// activations, one kernel per ISA from the template in conv2d_blocked_impl.h.
//
// Channel-blocked layout with block B (the ISA's vector width: 4 generic, 8
// AVX2, 16 AVX-512): C channels x P pixels as [ceil(C/B)][P][B], value (c, p)
// at ((c / B) * P + p) * B + c % B. A pixel's B channels are then one vector,
// so a register tile of pixels x output blocks is filled by broadcasting one
// input value and multiply-adding a vector of B output channels' weights; no
// transposes between layers. Lanes past C in the last block are padding: their
// input content is unspecified (never read as data), outputs write zeros there.
// The planes layout [C][P] (value (c, p) at c * P + p) is taken on either side,
// for the layers next to ones that keep planes (a network's first layer reads
// its 3 input planes this way).
//
// The input is read as it is given, padding included: a layer with padding
// passes a padded copy. A 1x1 layer with stride 1 is one long row (out_h 1,
// out_w = in_w = pixels), so its tiles run across the plane's rows.
#pragma once
#include <cstdint>
#include <vector>

namespace kestrel {

struct Conv2dBlockedProblem {
    const float* x; // input, blocked or planes (x_blocked), in_h x in_w pixels (padding included)
    bool x_blocked;
    int64_t in_ch, out_ch;
    int64_t in_h, in_w, out_h, out_w;
    int64_t kh = 1, kw = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
    const float* packed = nullptr; // pack_conv2d_blocked_weights(...) for this kernel's block
    const float* bias = nullptr;   // ceil(out_ch/B)*B values, zero past out_ch; never null (caller passes zeros)
    float* y = nullptr;            // output, blocked or planes (y_blocked), out_h x out_w pixels
    bool y_blocked = false;
    // {lo, hi}: each sum clamped, std::min(std::max(v, lo), hi), before it is
    // stored (ReLU, ReLU6 and Clip fused: the same bits as after it); none: nullptr.
    const float* clamp = nullptr;

    int64_t taps() const { return kh * kw; }
    int64_t out_pixels() const { return out_h * out_w; }
};

// A 1x1 layer with stride 1 and no padding over `pixels` pixels: one row.
Conv2dBlockedProblem pointwise_problem(int64_t in_ch, int64_t out_ch, int64_t pixels);

struct Conv2dBlockedKernel {
    const char* isa;
    int64_t block; // B
    // Output channel blocks [ob0, ob1) x output pixels [p0, p1) (row-major
    // over the output plane):
    //   y[o][oy][ox] = bias[o] + sum over c = 0..in_ch-1, then ky, kx, in that order, of
    //                  w[o][c][ky][kx] * x[c][oy * stride_h + ky * dilation_h][ox * stride_w + kx * dilation_w]
    // Blocked y: whole blocks are written, lanes past out_ch get 0 (zero weights and bias).
    // Planes y: only channels < out_ch are written.
    // Nothing outside the range is written, so threads may split blocks and pixels.
    void (*run)(const Conv2dBlockedProblem& p, int64_t ob0, int64_t ob1, int64_t p0, int64_t p1);
};

// w is [out_ch][in_ch][taps] row-major; returns ceil(out_ch/block) panels,
// each of the input channel blocks in order, a block as [tap][channel in
// block][block] (its real channels only), zeros past out_ch.
std::vector<float> pack_conv2d_blocked_weights(const float* w, int64_t out_ch, int64_t in_ch, int64_t taps,
                                               int64_t block);

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const Conv2dBlockedKernel& conv2d_blocked_kernel();
std::vector<const Conv2dBlockedKernel*> conv2d_blocked_kernels_available();

} // namespace kestrel
