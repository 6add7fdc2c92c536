#include "kernels/isa.h"

#include "core/cpu_features.h"

namespace kestrel {

std::vector<Isa> isas_available()
{
    std::vector<Isa> all{Isa::Generic};
#if defined(__x86_64__) || defined(__i386__)
    if (cpu_has_avx2()) all.push_back(Isa::Avx2);
    if (cpu_has_avx512()) all.push_back(Isa::Avx512);
#endif
    return all;
}

} // namespace kestrel
