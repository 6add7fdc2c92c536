// The AMX GEMM tile, written once for both tile products: 32 x 32 sums as
// four 16 x 16 tiles (C00 C01 / C10 C11 in tiles 0-3), each block of 16
// 4-byte words of depth one product per sum tile from two A tiles (rows
// 0-15, 16-31: 16 rows of 16 words, A packed with blocks of 16 words) and two
// B tiles (columns 0-15, 16-31 of the block's 16 words, rows at the block's
// stride: offsets[q+1] - offsets[q] in place, the panel's row stride packed).
// Products (the template's P):
//   bfloat16 (bf16_gemm.h)  tdpbf16ps: fp32 sums of 2 bfloat16 products a word
//   int8 (int8_gemm.h)      tdpbsud: int32 sums of 4 signed x unsigned byte
//                           products a word (wrapping)
// A tile product is 16 x 16 x 64 bytes: 8192 bfloat16 or 16384 int8
// multiply-adds; measured here 1.5e12 bfloat16 multiply-adds/s with both
// operands in L1, a third of that from L2 (the vector units: 3.2e10 fp32).
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/cpu_features.h"
#include "kernels/int8_gemm.h"

// Internal linkage, one copy per file (see vector_of.h).
namespace kestrel::detail {
namespace {

constexpr int kTileRows = 16, kTileBytes = 64;

// Palette 1, eight tiles of 16 rows of 64 bytes (every Kestrel tile uses
// this configuration); loaded again after other code may have run on the
// thread (amx_tiles_configured).
struct alignas(64) TileConfig {
    uint8_t palette = 1, start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t bytes_per_row[16] = {};
    uint8_t rows[16] = {};
    TileConfig()
    {
        for (int t = 0; t < 8; ++t) bytes_per_row[t] = kTileBytes, rows[t] = kTileRows;
    }
};

inline void configure_tiles()
{
    bool& configured = amx_tiles_configured();
    if (configured) return;
    static const TileConfig config;
    _tile_loadconfig(&config);
    configured = true;
}

// The four sum tiles from and to a 32 x 32 block of 4-byte sums, rows ld apart.
template <class Sum> void load_sums(const Sum* p, int64_t ld)
{
    const int64_t bytes = ld * static_cast<int64_t>(sizeof(Sum));
    _tile_loadd(0, p, bytes);
    _tile_loadd(1, p + 16, bytes);
    _tile_loadd(2, p + 16 * ld, bytes);
    _tile_loadd(3, p + 16 * ld + 16, bytes);
}
template <class Sum> void store_sums(Sum* p, int64_t ld)
{
    const int64_t bytes = ld * static_cast<int64_t>(sizeof(Sum));
    _tile_stored(0, p, bytes);
    _tile_stored(1, p + 16, bytes);
    _tile_stored(2, p + 16 * ld, bytes);
    _tile_stored(3, p + 16 * ld + 16, bytes);
}

// The products of P (below) for the four sum tiles: sum tile C += A tile X .
// B tile Y. (GCC's tile intrinsics paste their tile numbers into the
// instruction as written, so they take literals, not template arguments.)
#define KESTREL_AMX_PRODUCTS(product)                                                                                 \
    static void c00() { product(0, 4, 6); }                                                                           \
    static void c01() { product(1, 4, 7); }                                                                           \
    static void c10() { product(2, 5, 6); }                                                                           \
    static void c11() { product(3, 5, 7); }

// P: A (A's value type), Sum, and KESTREL_AMX_PRODUCTS of its instruction.
template <class P>
void amx_tile(int64_t words, const typename P::A* a_values, const WordPanel& b, const typename P::Sum* init,
              typename P::Sum* c, int64_t ldc, int rows, int cols)
{
    using Sum = typename P::Sum;
    configure_tiles();
    // The sums start at init: rows of init[i] for both column tiles.
    alignas(64) Sum buf[32 * 32]; // and a partial tile keeps only rows x cols
    for (int i = 0; i < 32; ++i) std::fill(buf + i * 32, buf + i * 32 + 32, init && i < rows ? init[i] : Sum(0));
    load_sums(buf, 32);
    const uint8_t* a = reinterpret_cast<const uint8_t*>(a_values);
    for (int64_t q = 0; q < words; q += 16) {
        const uint8_t* bq = b.offsets ? b.b + b.offsets[q] : b.b + q * b.stride;
        const int64_t stride = b.offsets ? b.offsets[q + 1] - b.offsets[q] : b.stride;
        // Tiles are not renamed: each load waits for the products reading
        // its tile before, so loads go between products.
        _tile_loadd(4, a, kTileBytes);
        _tile_loadd(6, bq, stride);
        P::c00();
        _tile_loadd(7, bq + kTileBytes, stride);
        P::c01();
        _tile_loadd(5, a + kTileRows * kTileBytes, kTileBytes);
        P::c10();
        P::c11();
        a += 2 * kTileRows * kTileBytes;
    }
    if (rows == 32 && cols == 32) {
        store_sums(c, ldc);
        return;
    }
    store_sums(buf, 32);
    for (int i = 0; i < rows; ++i) std::memcpy(c + i * ldc, buf + i * 32, sizeof(Sum) * cols);
}

} // namespace
} // namespace kestrel::detail
