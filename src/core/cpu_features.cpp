#include "core/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace kestrel {

namespace {

// KESTREL_ISA=generic|avx2 caps what is used (for testing every kernel path).
int isa_cap()
{
    const char* env = std::getenv("KESTREL_ISA");
    if (env == nullptr) return 2;
    if (std::strcmp(env, "generic") == 0) return 0;
    if (std::strcmp(env, "avx2") == 0) return 1;
    return 2;
}

#if defined(__x86_64__) || defined(__i386__)
// CPUID feature bits, plus XGETBV: the OS must save the YMM/ZMM state too.
struct X86Features {
    bool avx2 = false, avx512 = false, avx512_vnni = false, avx_vnni = false, avx512_bf16 = false, amx_bf16 = false,
         amx_int8 = false;
    X86Features()
    {
        unsigned a, b, c, d;
        if (!__get_cpuid(1, &a, &b, &c, &d)) return;
        const bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
        if (!osxsave || !avx) return;
        unsigned xcr0_lo, xcr0_hi;
        __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
        const bool ymm_state = (xcr0_lo & 0x6u) == 0x6u, zmm_state = (xcr0_lo & 0xe6u) == 0xe6u;
        if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
        avx2 = ymm_state && fma && f16c && (b & (1u << 5));
        const bool f = b & (1u << 16), dq = b & (1u << 17), bw = b & (1u << 30), vl = b & (1u << 31);
        avx512 = avx2 && zmm_state && f && dq && bw && vl;
        avx512_vnni = avx512 && (c & (1u << 11));
        const bool amx_tile = d & (1u << 24), amx_bf16_bit = d & (1u << 22), amx_int8_bit = d & (1u << 25);
        const bool tile_state = (xcr0_lo & 0x60000u) == 0x60000u; // XTILECFG and XTILEDATA
        if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
            avx_vnni = avx2 && (a & (1u << 4));
            avx512_bf16 = avx512 && (a & (1u << 5));
        }
        const bool tiles = amx_tile && tile_state && amx_permitted();
        amx_bf16 = avx512_bf16 && amx_bf16_bit && tiles;
        amx_int8 = avx512_vnni && amx_int8_bit && tiles;
    }
    // Linux hands a process the (8 KiB) tile data state only on request.
    static bool amx_permitted()
    {
#if defined(__linux__) && defined(__x86_64__)
        constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
        return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
        return false;
#endif
    }
};
const X86Features& x86_features()
{
    static const X86Features f;
    return f;
}
bool detect_avx2() { return x86_features().avx2; }
bool detect_avx512() { return x86_features().avx512; }
bool detect_avx512_vnni() { return x86_features().avx512_vnni; }
bool detect_avx_vnni() { return x86_features().avx_vnni; }
bool detect_avx512_bf16() { return x86_features().avx512_bf16; }
bool detect_amx_bf16() { return x86_features().amx_bf16; }
bool detect_amx_int8() { return x86_features().amx_int8; }
#else
bool detect_avx2() { return false; }
bool detect_avx512() { return false; }
bool detect_avx512_vnni() { return false; }
bool detect_avx_vnni() { return false; }
bool detect_avx512_bf16() { return false; }
bool detect_amx_bf16() { return false; }
bool detect_amx_int8() { return false; }
#endif

} // namespace

bool cpu_has_avx2()
{
    static const bool has = detect_avx2() && isa_cap() >= 1;
    return has;
}

bool cpu_has_avx512()
{
    static const bool has = detect_avx512() && isa_cap() >= 2;
    return has;
}

bool cpu_has_avx512_vnni()
{
    static const bool has = detect_avx512_vnni() && isa_cap() >= 2;
    return has;
}

bool cpu_has_avx_vnni()
{
    static const bool has = detect_avx_vnni() && isa_cap() >= 1;
    return has;
}

bool cpu_has_avx512_bf16()
{
    static const bool has = detect_avx512_bf16() && isa_cap() >= 2;
    return has;
}

bool cpu_has_amx_bf16()
{
    static const bool has = detect_amx_bf16() && isa_cap() >= 2;
    return has;
}

bool cpu_has_amx_int8()
{
    static const bool has = detect_amx_int8() && isa_cap() >= 2;
    return has;
}

std::string cpu_isa_name()
{
    if (cpu_has_avx512()) return "avx512";
    if (cpu_has_avx2()) return "avx2";
    return "generic";
}

bool& amx_tiles_configured()
{
    thread_local bool configured = false;
    return configured;
}

} // namespace kestrel
