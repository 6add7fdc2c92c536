// A TensorFlow Lite file, verified and read: its bytes are checked by the
// flatbuffer verifier before any field is read, then every tensor's shape,
// dtype, quantization and data (a buffer inside the file, or past its end
// for files over 2 GB) is checked against the rest, so the converter reads
// only values that are there.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/tensor.h"
#include "tflite_schema_generated.h"

namespace kestrel::tflite_import {

namespace fb = kestrel::tflite_fb;

// Per-tensor or per-channel affine quantization: real = scale * (q - zero_point).
struct Quantization {
    std::vector<float> scale;
    std::vector<int64_t> zero_point;
    int axis = 0; // the channel axis when there are several scales
    bool present() const { return !scale.empty(); }
};

struct TensorInfo {
    std::string name;   // unique among the file's tensors (a repeated or empty name gets its index)
    Shape shape;        // the file's declared shape (NHWC for images)
    Shape signature;    // shape_signature: -1 where the size varies (empty when absent)
    DType dtype = DType::F32;
    fb::TensorType file_type = fb::TensorType::FLOAT32;
    Quantization quant;
    const uint8_t* data = nullptr; // the constant's bytes, or null for an activation
    size_t data_size = 0;
    const fb::SparsityParameters* sparsity = nullptr;
};

class TfliteFile {
public:
    // Verifies `bytes` (kept by reference: the caller keeps them alive).
    TfliteFile(const uint8_t* bytes, size_t size, std::string source, int64_t max_tensor_bytes);
    // Throws TooLargeError when `shape` of `dtype` exceeds the limit.
    void check_size(const Shape& shape, DType dtype, const std::string& what) const;

    const std::string& source() const { return source_; }
    const fb::Model& model() const { return *model_; }
    const fb::SubGraph& graph() const { return *graph_; }
    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo& tensor(int index, const std::string& context) const;

    // The operator code of operator `op`: builtin code (newer files keep it
    // in builtin_code, older ones in the deprecated byte), custom name, version.
    struct OpCode {
        fb::BuiltinOperator builtin = fb::BuiltinOperator::ADD;
        std::string custom;
        int version = 1;
        std::string name() const; // "CONV_2D" or the custom code
    };
    OpCode opcode(const fb::Operator& op, int op_index) const;

    // A constant tensor's values as stored (float16, int8 with its
    // quantization, ...; sparse tensors densified); fails when it has none.
    Tensor constant_values(int index) const;

private:
    void read_tensors();

    const uint8_t* bytes_;
    size_t size_;
    std::string source_;
    int64_t max_tensor_bytes_;
    const fb::Model* model_ = nullptr;
    const fb::SubGraph* graph_ = nullptr;
    std::vector<TensorInfo> tensors_;
};

// The engine's dtype of a TFLite tensor type (fails for types it has none of).
DType dtype_of(fb::TensorType type, const std::string& context);

} // namespace kestrel::tflite_import
