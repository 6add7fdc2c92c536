// bfloat16 GEMM with fp32 sums, for Options::precision BF16: C[i][j] (fp32) =
// init[i] + sum_k A[i][k] B[k][j], A and B rounded to bfloat16 (nearest even).
//
// As the int8 GEMM (int8_gemm.h), the depth goes in 4-byte words, here pairs
// of bfloat16 of consecutive k (the pair vdpbf16ps and AMX's tdpbf16ps
// multiply into one fp32 lane). B's words are WordPanel's: word q's nr
// columns (4 bytes each) at b + q * stride, or at b + offsets[q] (bytes). A is
// packed per kernel into panels of mr rows, [word block][row][block_words
// words]: block_words is 1 for the vector tiles (dot_gemm_tile.h), whose
// broadcasts read one word of each row in turn, and 16 for AMX, whose A tiles
// are 16 rows of 64 bytes. A kernel with blocks of words takes the depth in
// whole blocks, B's words within a block at one stride (offsets[q+1] -
// offsets[q] for the block's first word q); A is zero past k.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/int8_gemm.h"

namespace kestrel {

struct Bf16GemmKernel {
    const char* isa;
    int mr, nr;
    int block_words; // the depth's unit, in words (see above)
    // c[i*ldc + j] = init[i] + the sums of `words` words of A's and B's
    // products, for i < rows <= mr and j < cols <= nr; init holds `rows`
    // values, or is nullptr (zeros); every word of `b` has nr readable columns.
    void (*tile)(int64_t words, const uint16_t* a, const WordPanel& b, const float* init, float* c, int64_t ldc,
                 int rows, int cols);
};

// The fastest kernel this CPU runs (AMX, AVX512-BF16, else the portable one,
// capped by KESTREL_ISA), and all of them (generic first) for tests.
const Bf16GemmKernel& bf16_gemm_kernel();
std::vector<const Bf16GemmKernel*> bf16_gemm_kernels_available();
// Whether the CPU has bfloat16 dot-product instructions (else bfloat16 only
// loses precision: Options::precision BF16 then runs fp32).
bool bf16_gemm_has_dot_instructions();

// Words of depth k, rounded up to the kernel's blocks.
int64_t bf16_gemm_words(const Bf16GemmKernel& kern, int64_t k);
// A (m x k floats, a[i*row_stride + kk*col_stride]) rounded and packed
// into ceil(m/mr) panels of bf16_gemm_words(k) * mr words (2 values each).
int64_t bf16_gemm_packed_a_values(const Bf16GemmKernel& kern, int64_t m, int64_t k);
void bf16_gemm_pack_a(const Bf16GemmKernel& kern, const float* a, int64_t m, int64_t k, int64_t row_stride,
                      uint16_t* dst, int64_t col_stride = 1);
// B (k x n floats, b[kk*row_stride + j*col_stride]: row-major, or a weight
// matrix [n][k] with the strides swapped) rounded and packed into
// ceil(n/nr) panels of bf16_gemm_words(k) * nr words, zero past k and n.
int64_t bf16_gemm_packed_b_values(const Bf16GemmKernel& kern, int64_t n, int64_t k);
void bf16_gemm_pack_b(const Bf16GemmKernel& kern, const float* b, int64_t k, int64_t n, int64_t row_stride,
                      uint16_t* dst, int64_t col_stride = 1);
// The same from B packed once for the float GEMM (gemm.h's gemm_pack_b, panels
// of `float_nr` columns): the layers that keep only that copy of their weights.
std::vector<uint16_t> bf16_gemm_pack_b_from_float_panels(const Bf16GemmKernel& kern, const float* panels, int64_t k,
                                                         int64_t n, int64_t float_nr);

// Two floats as one word of bfloat16 (lo first), rounded to nearest even.
uint32_t bf16_word(float lo, float hi);

// C (m x n, row stride ldc) = init + A B from packed A and B; tasks are
// column panels, split across ctx's threads.
void bf16_gemm(const Bf16GemmKernel& kern, int64_t m, int64_t n, int64_t k, const uint16_t* a_packed,
               const float* init, const uint16_t* b_packed, float* c, int64_t ldc, const ParallelContext& ctx);
// y (m x n, row stride n) = x B for a row-major x (m x k, row stride ldx),
// packed into `a_scratch` (bf16_gemm_packed_a_values(kern, m, k) values): a
// layer's activations times its bfloat16 weights.
void bf16_gemm_rows(const Bf16GemmKernel& kern, int64_t m, int64_t n, int64_t k, const float* x, int64_t ldx,
                    const uint16_t* b_packed, float* y, uint16_t* a_scratch, const ParallelContext& ctx);

} // namespace kestrel
