// The Winograd tile transforms for avx512: 16 tiles per vector on planes, 16 channels per vector on blocks.
#include "kernels/winograd_tiles.h"

namespace kestrel::detail {

const WinogradKernel& winograd_kernel_avx512()
{
    static const WinogradKernel k{"avx512", 16, winograd_input<VectorOf<16>>, winograd_output<VectorOf<16>>,
                                  winograd_input_blocks<VectorOf<16>>, winograd_output_blocks<VectorOf<16>>};
    return k;
}

} // namespace kestrel::detail
