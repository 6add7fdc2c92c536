// The row dot products (float, half-float and bfloat16 weights) for 4-float vectors (SSE2 on x86-64, NEON on ARM),
// converting in scalar code.
#include "core/half.h"
#include "kernels/row_dots_impl.h"

namespace kestrel::detail {

namespace {
struct ScalarHalves {
    static float one(uint16_t h) { return half_to_float(h); }
    static VectorOf<4>::vec load(const uint16_t* p)
    {
        const float lanes[4] = {one(p[0]), one(p[1]), one(p[2]), one(p[3])};
        return VectorOf<4>::load(lanes);
    }
};
} // namespace

const RowDotKernel& row_dot_kernel_generic()
{
    static const RowDotKernel k{"generic", row_dots<VectorOf<4>, FloatWeights<VectorOf<4>>>,
                                   row_dots<VectorOf<4>, ScalarHalves>,
                                   row_dots<VectorOf<4>, Bf16Weights<VectorOf<4>>>};
    return k;
}

} // namespace kestrel::detail
