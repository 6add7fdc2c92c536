// Bytes read from a file into a Bool tensor may hold any value, but a C++ bool
// must be 0 or 1 (anything else is undefined behaviour when read as bool).
// Every reader of untrusted data calls this on what it loads.
#pragma once

#include <cstdint>

#include "kestrel/tensor.h"

namespace kestrel {

// Maps every non-zero byte of a Bool tensor to 1 (numpy's truth rule); no-op
// for other dtypes.
inline void normalize_bools(Tensor& t)
{
    if (t.dtype() != DType::Bool) return;
    uint8_t* bytes = static_cast<uint8_t*>(t.raw());
    for (int64_t i = 0; i < t.numel(); ++i) bytes[i] = bytes[i] != 0;
}

} // namespace kestrel
