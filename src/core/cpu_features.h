// Run-time CPU feature detection: kernels compiled for an ISA are only called
// when the CPU running us has it (binaries are portable; no -march=native).
#pragma once
#include <string>

namespace kestrel {

bool cpu_has_avx2();    // AVX2 + FMA + F16C
bool cpu_has_avx512();  // AVX-512 F/BW/VL/DQ
bool cpu_has_avx512_vnni(); // the above and AVX512-VNNI (int8 dot products)
bool cpu_has_avx_vnni();    // AVX2 and AVX-VNNI (the same dot products on 256 bits)
// "avx512", "avx2" or "generic": the best ISA the kernels will use.
std::string cpu_isa_name();

} // namespace kestrel
