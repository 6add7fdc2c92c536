// The Winograd tile transforms for generic: 4 tiles per vector on planes, 4 channels per vector on blocks.
#include "kernels/winograd_tiles.h"

namespace kestrel::detail {

const WinogradKernel& winograd_kernel_generic()
{
    static const WinogradKernel k{"generic", 4, winograd_input<VectorOf<4>>, winograd_output<VectorOf<4>>,
                                  winograd_input_blocks<VectorOf<4>>, winograd_output_blocks<VectorOf<4>>};
    return k;
}

} // namespace kestrel::detail
