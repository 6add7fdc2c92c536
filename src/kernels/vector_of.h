// A vector of W floats for the per-ISA kernel templates (GCC/Clang vector
// extensions): a file under kernels/<isa>/ instantiates a template with
// VectorOf<width>, and its ISA flags decide the instructions (SSE2 or NEON for
// 4 floats, AVX for 8, AVX-512 for 16). Those files are compiled with
// -ffp-contract=fast, so a*b + c becomes one fused multiply-add there.
#pragma once
#include <cstdint>
#include <cstring>

// A vec is never an argument or result of a function that is not inlined: GCC
// then leaves out the vzeroupper at its return (it assumes an AVX caller), and
// the SSE code of the generic kernels after it runs with the upper register
// halves dirty, 2-3x slower on AMD Zen 4 (false dependencies on every xmm write).
//
// Everything here has internal linkage (an unnamed namespace): each kernels/<isa>/
// file compiles its own copy with its own flags, which the linker never merges
// with another ISA's (an AVX-512 copy of a helper must not serve the generic kernel).
namespace kestrel::detail {
namespace {

// v as a rounded value: a multiply before it is not fused into an add after
// it (the ISA files are compiled with -ffp-contract=fast), where the scalar
// code's bits must be kept.
template <class Vec> inline Vec rounded(Vec v)
{
#if defined(__x86_64__) || defined(__i386__)
    asm("" : "+v"(v));
#elif defined(__aarch64__)
    asm("" : "+w"(v));
#endif
    return v;
}

template <int W> struct VectorOf {
    typedef float vec __attribute__((vector_size(W * sizeof(float))));
    static constexpr int width = W;
    static vec load(const float* p)
    {
        vec v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    static void store(float* p, vec v) { std::memcpy(p, &v, sizeof v); }
    static vec set1(float x)
    {
        float lanes[W]; // compilers turn this into one broadcast ("vec{} + x" would add 0.f)
        for (int i = 0; i < W; ++i) lanes[i] = x;
        return load(lanes);
    }
    static vec fmadd(vec a, vec b, vec c) { return a * b + c; }
};

} // namespace
} // namespace kestrel::detail
