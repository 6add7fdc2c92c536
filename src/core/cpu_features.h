// Run-time CPU feature detection: kernels compiled for an ISA are only called
// when the CPU running us has it (binaries are portable; no -march=native).
#pragma once
#include <string>

namespace kestrel {

bool cpu_has_avx2();    // AVX2 + FMA + F16C
bool cpu_has_avx512();  // AVX-512 F/BW/VL/DQ
bool cpu_has_avx512_vnni(); // the above and AVX512-VNNI (int8 dot products)
bool cpu_has_avx_vnni();    // AVX2 and AVX-VNNI (the same dot products on 256 bits)
bool cpu_has_avx512_bf16(); // AVX-512 and AVX512-BF16 (bfloat16 pair dot products, vdpbf16ps)
// AVX512-BF16 and AMX-BF16 (tile matrix products of bfloat16), with the
// kernel's leave to use the tile state (Linux: arch_prctl, asked once here).
bool cpu_has_amx_bf16();
// AVX512-VNNI and AMX-INT8 (tile products of bytes), with the same leave.
bool cpu_has_amx_int8();
// Whether this thread's AMX tile configuration is the one Kestrel's tiles
// load (kernels/amx/amx_tile.h). Cleared before every layer runs and before
// every parallel chunk, since other code on the thread (the caller, callbacks,
// custom ops, a library with tiles of its own) may load its own in between.
bool& amx_tiles_configured();
// "avx512", "avx2" or "generic": the best ISA the kernels will use.
std::string cpu_isa_name();

} // namespace kestrel
