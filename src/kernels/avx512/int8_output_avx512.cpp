// The int8 output kernels on 16-float vectors.
#include "kernels/int8_output_impl.h"

namespace kestrel::detail {

const Int8OutputKernel& int8_output_kernel_avx512() { return int8_output_kernel_of<VectorOf<16>>("avx512"); }

} // namespace kestrel::detail
