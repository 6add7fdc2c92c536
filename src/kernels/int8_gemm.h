// Int8 GEMM for the quantized layers: C[i][j] (int32) = init[i] + sum_k
// A[i][k] * B[k][j], A signed 8-bit (weights), B unsigned 8-bit (activations
// stored with an offset of 128, so that signed values fit; the offset's share,
// 128 * the sum of row i of A, is taken off through init: int8_gemm_row_sums).
//
// As the float GEMM (gemm.h): a register tile per ISA (dot_gemm_tile.h) and
// a driver here. The k axis goes in quads, as the dot-product instructions
// take it (AVX512-VNNI's vpdpbusd sums 4 byte products into each int32 lane):
// A is packed into panels of `mr` rows, [quad block][row][block quads][4
// bytes] (block_quads: 1 for the vector tiles, 16 for AMX's 64-byte tile
// rows); B into panels of `nr` columns, [quad][column][4 bytes]; k is padded
// with zeros of A to whole blocks of quads. Sums are exact in int32 (every kernel gives the same bits) as
// long as k * 127 * 255 stays below 2^31 (k up to 66000).
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/error.h"
#include "kestrel/parallel.h"
#include "kestrel/tensor.h"

namespace kestrel {

constexpr int64_t kInt8GemmQuad = 4;

inline int64_t int8_gemm_quads(int64_t k) { return (k + kInt8GemmQuad - 1) / kInt8GemmQuad; }

// Where a dot-product tile (int8 here, bfloat16 in bf16_gemm.h) reads B's
// 4-byte words (int8 quads, bfloat16 pairs): word q's nr columns at
// b + q * stride, or at b + offsets[q] (bytes) when there are offsets (a
// convolution's input read in place, one offset per word of the depth).
struct WordPanel {
    const uint8_t* b = nullptr;
    int64_t stride = 0;
    const int64_t* offsets = nullptr;
};

struct Int8GemmKernel {
    const char* isa;
    int mr, nr;
    int block_quads; // the depth's unit, in quads (see above)
    // c[i*ldc + j] = init[i] + sum over the quads of A's and B's byte
    // products, for i < rows <= mr and j < cols <= nr; init holds `rows`
    // values. `a` is an A panel; every quad of `b` has nr readable columns.
    void (*tile)(int64_t quads, const int8_t* a, const WordPanel& b, const int32_t* init, int32_t* c, int64_t ldc,
                 int rows, int cols);
    // y[o] = sum over i < n of w[o * n + i] * x[i] for o < rows (the fully
    // connected layers of one input: weights streamed once), int32 wrapping.
    void (*row_dots)(const int8_t* w, const uint8_t* x, int64_t n, int64_t rows, int32_t* y);
};

// The fastest kernel this CPU runs (capped by KESTREL_ISA), and all of them
// (generic first) for tests.
const Int8GemmKernel& int8_gemm_kernel();
std::vector<const Int8GemmKernel*> int8_gemm_kernels_available();
// The fastest kernel for a depth that comes in runs of `run` values (a
// convolution's channels at each tap): a kernel with blocks of quads pads
// each run to whole blocks, so it is taken only for runs of half a block or more.
const Int8GemmKernel& int8_gemm_kernel_for_runs(int64_t run);
// Whether int8_gemm_kernel() has the CPU's dot-product instructions (else the
// float GEMM runs int8 layers faster: kernels/conv2d_int8_gemm.h).
bool int8_gemm_has_dot_instructions();

// Quads of depth k, rounded up to the kernel's blocks.
int64_t int8_gemm_depth_quads(const Int8GemmKernel& kern, int64_t k);

// A (m x k, a[i*row_stride + kk]) packed into ceil(m/mr) panels of
// depth_quads(k)*mr*4 bytes.
int64_t int8_gemm_packed_a_bytes(const Int8GemmKernel& kern, int64_t m, int64_t k);
void int8_gemm_pack_a(const Int8GemmKernel& kern, const int8_t* a, int64_t m, int64_t k, int64_t row_stride,
                      int8_t* dst);
// The sum of each of A's m rows (k values).
std::vector<int64_t> int8_gemm_row_sums(const int8_t* a, int64_t m, int64_t k, int64_t row_stride);

// B (k x n, b[kk*row_stride + j], unsigned) packed into ceil(n/nr) panels of
// depth_quads(k)*nr*4 bytes, zero past k and n.
int64_t int8_gemm_packed_b_bytes(const Int8GemmKernel& kern, int64_t n, int64_t k);
void int8_gemm_pack_b(const Int8GemmKernel& kern, const uint8_t* b, int64_t k, int64_t n, int64_t row_stride,
                      uint8_t* dst);
// The same from B's transpose (n x k, bt[j*row_stride + kk]): a weight
// matrix whose rows are B's columns.
void int8_gemm_pack_b_transposed(const Int8GemmKernel& kern, const uint8_t* bt, int64_t n, int64_t k,
                                 int64_t row_stride, uint8_t* dst);

// C (m x n, row stride ldc) = init + A B from packed A and B; tasks are
// column panels, split across ctx's threads.
void int8_gemm(const Int8GemmKernel& kern, int64_t m, int64_t n, int64_t k, const int8_t* a_packed,
               const int32_t* init, const uint8_t* b_packed, int32_t* c, int64_t ldc, const ParallelContext& ctx);

} // namespace kestrel
