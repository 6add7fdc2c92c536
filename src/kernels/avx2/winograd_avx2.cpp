// The Winograd tile transforms for avx2: 8 tiles per vector on planes, 8 channels per vector on blocks.
#include "kernels/winograd_tiles.h"

namespace kestrel::detail {

const WinogradKernel& winograd_kernel_avx2()
{
    static const WinogradKernel k{"avx2", 8, winograd_input<VectorOf<8>>, winograd_output<VectorOf<8>>,
                                  winograd_input_blocks<VectorOf<8>>, winograd_output_blocks<VectorOf<8>>};
    return k;
}

} // namespace kestrel::detail
