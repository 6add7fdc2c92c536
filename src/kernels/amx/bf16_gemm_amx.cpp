// The AMX-BF16 GEMM tile: 32 x 32 fp32 sums as four 16 x 16 tiles (C00 C01 /
// C10 C11 in tiles 0-3), each block of 16 words of depth one tdpbf16ps per
// sum tile from two A tiles (rows 0-15, 16-31: 16 rows of 16 words, packed
// with block_words 16) and two B tiles (columns 0-15, 16-31 of the block's
// 16 words, rows at the block's stride). A tile product is 16 x 16 x 32
// multiply-adds: this CPU's vector units do 16 x 2 per cycle, its tile unit
// 1024 (1.5e12/s measured with both operands in L1, a third of that from L2).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/bf16_gemm.h"

namespace kestrel::detail {

namespace {

constexpr int kTileRows = 16, kTileBytes = 64;

// Palette 1, eight tiles of 16 rows of 64 bytes; loaded once per thread
// (nothing else in Kestrel configures tiles).
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

void configure_tiles()
{
    thread_local bool configured = false;
    if (configured) return;
    static const TileConfig config;
    _tile_loadconfig(&config);
    configured = true;
}

// The four sum tiles from and to a 32 x 32 block of floats, rows ld floats apart.
void load_sums(const float* p, int64_t ld)
{
    const int64_t bytes = ld * static_cast<int64_t>(sizeof(float));
    _tile_loadd(0, p, bytes);
    _tile_loadd(1, p + 16, bytes);
    _tile_loadd(2, p + 16 * ld, bytes);
    _tile_loadd(3, p + 16 * ld + 16, bytes);
}
void store_sums(float* p, int64_t ld)
{
    const int64_t bytes = ld * static_cast<int64_t>(sizeof(float));
    _tile_stored(0, p, bytes);
    _tile_stored(1, p + 16, bytes);
    _tile_stored(2, p + 16 * ld, bytes);
    _tile_stored(3, p + 16 * ld + 16, bytes);
}

void amx_tile(int64_t words, const uint16_t* a, const Int8Panel& b, const float* init, float* c, int64_t ldc,
              int rows, int cols)
{
    configure_tiles();
    // The sums start at init: rows of init[i] for both column tiles.
    alignas(64) float buf[32 * 32]; // and a partial tile keeps only rows x cols
    for (int i = 0; i < 32; ++i) std::fill(buf + i * 32, buf + i * 32 + 32, init && i < rows ? init[i] : 0.f);
    load_sums(buf, 32);
    for (int64_t q = 0; q < words; q += 16) {
        const uint8_t* bq = b.offsets ? b.b + b.offsets[q] : b.b + q * b.stride;
        const int64_t stride = b.offsets ? b.offsets[q + 1] - b.offsets[q] : b.stride;
        // Tiles are not renamed: each load waits for the products reading
        // its tile before, so loads go between products.
        _tile_loadd(4, a, kTileBytes);
        _tile_loadd(6, bq, stride);
        _tile_dpbf16ps(0, 4, 6);
        _tile_loadd(7, bq + kTileBytes, stride);
        _tile_dpbf16ps(1, 4, 7);
        _tile_loadd(5, a + kTileRows * 32, kTileBytes);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
        a += 2 * kTileRows * 32;
    }
    if (rows == 32 && cols == 32) {
        store_sums(c, ldc);
        return;
    }
    store_sums(buf, 32);
    for (int i = 0; i < rows; ++i) std::memcpy(c + i * ldc, buf + i * 32, sizeof(float) * cols);
}

} // namespace

const Bf16GemmKernel& bf16_gemm_kernel_amx()
{
    static const Bf16GemmKernel k{"amx", 32, 32, 16, amx_tile};
    return k;
}

} // namespace kestrel::detail
