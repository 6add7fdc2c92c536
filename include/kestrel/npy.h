// NumPy .npy files (format 1.0-3.0, little-endian, C order) for every Kestrel
// dtype; string tensors (UTF-8) as numpy's '<U<n>' (UTF-32) strings, read
// from '<U<n>' or bytes '|S<n>'.
#pragma once
#include <string>

#include "kestrel/tensor.h"

namespace kestrel {

// Throws kestrel::Error naming the file and what is wrong (bad magic, header,
// unsupported dtype, Fortran order, truncated data, too large).
Tensor read_npy(const std::string& path, int64_t max_bytes = int64_t(4) << 30);
Tensor parse_npy(const void* data, size_t size, const std::string& source_name = "<memory>",
                 int64_t max_bytes = int64_t(4) << 30);
void write_npy(const std::string& path, const Tensor& tensor);

} // namespace kestrel
