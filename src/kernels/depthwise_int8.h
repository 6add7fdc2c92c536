// Int8 depthwise 2-D convolution on the CPU's byte dot products (vpdpbusd):
// each int32 lane sums the 4 byte products of one kernel row (up to 4 taps)
// for one output, so a 3x3 window is 3 dot products per 16 outputs. The
// input is a padded copy of the plane in bytes, unsigned (int8 values + 128,
// as the int8 GEMM's activations): the sum then carries 128 times the
// channel's weight sum, which `start` takes off. Only on CPUs with AVX512-VNNI
// and for kernels whose rows fit a quad (see takes()); the float depthwise
// kernels serve the rest exactly.
#pragma once
#include <cstdint>

#include "kernels/depthwise_conv2d.h"

namespace kestrel {

struct DepthwiseInt8Kernel {
    const char* isa;
    // sums[oy * out_w + ox] = start + sum over (ky, kx) of weights[ky * kw + kx] *
    //   padded[(oy * stride_h + ky * dilation_h) * row_bytes + ox * stride_w + kx * dilation_w]
    // (int32, wrapping). padded: g.padded_h() rows of row_bytes >= padded_row_bytes(g) bytes.
    void (*plane)(const Depthwise2dGeometry& g, const uint8_t* padded, int64_t row_bytes, const int8_t* weights,
                  int32_t start, int32_t* sums);
};

// Bytes a padded row needs: the kernel reads whole vectors past the plane's edge.
inline int64_t depthwise_int8_row_bytes(const Depthwise2dGeometry& g) { return g.padded_w() + 64; }

// The kernel for g on this CPU (capped by KESTREL_ISA), or null: no dot
// products, more than 64 kernel rows, or kernel rows of more than 4 taps,
// a stride above 4 or spread too wide for one 16-byte lane (3 * stride_w +
// (kw - 1) * dilation_w > 15).
const DepthwiseInt8Kernel* depthwise_int8_kernel(const Depthwise2dGeometry& g);

} // namespace kestrel
