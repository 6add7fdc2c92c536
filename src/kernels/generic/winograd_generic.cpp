// The Winograd tile transforms for generic: 4 tiles per vector.
#include "kernels/winograd_tiles.h"

namespace kestrel::detail {

const WinogradKernel& winograd_kernel_generic()
{
    static const WinogradKernel k{"generic", 4, winograd_input<VectorOf<4>>, winograd_output<VectorOf<4>>};
    return k;
}

} // namespace kestrel::detail
