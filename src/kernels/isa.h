// Which ISA's kernels this CPU runs. Every kernel family (GEMM tile, depthwise
// plane, ...) has one kernel per ISA, named in an IsaKernels table;
// kernels_available() lists those this CPU runs.
#pragma once
#include <vector>

namespace kestrel {

enum class Isa { Generic, Avx2, Avx512 };

// Generic first, then what the CPU has (capped by KESTREL_ISA).
std::vector<Isa> isas_available();

template <class Kernel> struct IsaKernels {
    const Kernel& (*generic)();
    const Kernel& (*avx2)();
    const Kernel& (*avx512)();
};

// Generic first; the last is the fastest.
template <class Kernel> std::vector<const Kernel*> kernels_available(const IsaKernels<Kernel>& table)
{
    std::vector<const Kernel*> all;
    for (Isa isa : isas_available())
        all.push_back(isa == Isa::Avx512 ? &table.avx512() : isa == Isa::Avx2 ? &table.avx2() : &table.generic());
    return all;
}

} // namespace kestrel
