// The int8 output kernels on 4-float vectors.
#include "kernels/int8_output_impl.h"

namespace kestrel::detail {

const Int8OutputKernel& int8_output_kernel_generic() { return int8_output_kernel_of<VectorOf<4>>("generic"); }

} // namespace kestrel::detail
