// Which ISA's kernels this CPU runs. Every kernel family (GEMM tile, depthwise
// plane, ...) has one kernel per ISA, named in an IsaKernels table by
// KESTREL_KERNEL_FAMILY below;
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

// Defines a kernel family's selection from its three per-ISA definitions
// `detail::FAMILY_kernel_{generic,avx2,avx512}()` (one file per ISA folder):
//   std::vector<const KERNEL*> FAMILY_kernels_available();  generic first
//   const KERNEL& FAMILY_kernel();                           the fastest here
// Use it inside namespace kestrel, in the family's .cpp.
#define KESTREL_KERNEL_FAMILY(KERNEL, FAMILY)                                                              \
    namespace detail {                                                                                     \
    const KERNEL& FAMILY##_kernel_generic();                                                               \
    const KERNEL& FAMILY##_kernel_avx2();                                                                  \
    const KERNEL& FAMILY##_kernel_avx512();                                                                \
    }                                                                                                      \
    std::vector<const KERNEL*> FAMILY##_kernels_available()                                                \
    {                                                                                                      \
        return kernels_available(IsaKernels<KERNEL>{detail::FAMILY##_kernel_generic,                       \
                                                    detail::FAMILY##_kernel_avx2,                          \
                                                    detail::FAMILY##_kernel_avx512});                      \
    }                                                                                                      \
    const KERNEL& FAMILY##_kernel()                                                                        \
    {                                                                                                      \
        static const KERNEL& best = *FAMILY##_kernels_available().back();                                  \
        return best;                                                                                       \
    }
