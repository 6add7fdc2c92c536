// How a layer's weights are stored and read back, whatever the file format:
// the interface a front-end's weight source implements and Op::load_model reads.
#pragma once
#include <cstdint>

#include "kestrel/options.h"
#include "kestrel/tensor.h"

namespace kestrel {

// How a weight is stored in the .bin: tagged (ncnn "type 0", a 4-byte tag says
// fp32/fp16/int8/codebook) or raw fp32 ("type 1").
// Typed: raw little-endian values of any dtype, zero-padded to 4 bytes (our
// extension for constants of ONNX models: int64 shapes, bool masks, ...).
enum class WeightEncoding : uint8_t { Raw, Tagged, Typed };

// Source of weights for Op::load_model, in the order the op asks for them.
class WeightReader {
public:
    virtual ~WeightReader() = default;
    // Reads `count` values. Result is F32, or I8 for int8-tagged data.
    virtual Tensor load(int64_t count, WeightEncoding encoding) = 0;
    // Reads a tensor of any dtype stored as raw values (WeightEncoding::Typed).
    virtual Tensor load_typed(const Shape& shape, DType dtype) = 0;
    // The Net's load options, for ops that keep a transformed copy of their weights.
    LoadOptions options;
};

} // namespace kestrel
