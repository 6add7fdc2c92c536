#include "core/cpu_features.h"

#include <cstdlib>
#include <cstring>

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
bool detect_avx2()
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}
bool detect_avx512()
{
    __builtin_cpu_init();
    return detect_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
#else
bool detect_avx2() { return false; }
bool detect_avx512() { return false; }
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

std::string cpu_isa_name()
{
    if (cpu_has_avx512()) return "avx512";
    if (cpu_has_avx2()) return "avx2";
    return "generic";
}

} // namespace kestrel
