// Int8 max pooling of a plane on AVX-512's byte maxima, 64 input bytes at a
// time: each output row reads its window rows straight from the plane, with
// masked loads that give -128 (int8's padding) past the plane's edges and
// no copy; along a row, stride 1 takes one load per tap, stride 2 one per
// pair of taps (even and odd bytes as 16-bit lanes). The plain loops of
// pool2d.cpp ("generic") serve other windows and CPUs without AVX-512.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/pool2d.h"

namespace kestrel {

struct Int8MaxPoolKernel {
    const char* isa;
    // o (out_h x out_w) = the maxima of g's windows over p (in_h x in_w).
    void (*plane)(const int8_t* p, int8_t* o, const Pool2dGeometry& g);
};

// The fastest kernel for g on this CPU (capped by KESTREL_ISA): AVX-512 for
// strides 1 and 2 along rows and windows of up to 16 taps (larger ones go
// by rows of maxima, generic), and all that take g (generic first) for tests.
const Int8MaxPoolKernel& int8_max_pool_kernel(const Pool2dGeometry& g);
std::vector<const Int8MaxPoolKernel*> int8_max_pool_kernels_available(const Pool2dGeometry& g);

} // namespace kestrel
