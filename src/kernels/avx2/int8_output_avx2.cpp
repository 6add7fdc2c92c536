// The int8 output kernels on 8-float vectors.
#include "kernels/int8_output_impl.h"

namespace kestrel::detail {

const Int8OutputKernel& int8_output_kernel_avx2() { return int8_output_kernel_of<VectorOf<8>>("avx2"); }

} // namespace kestrel::detail
