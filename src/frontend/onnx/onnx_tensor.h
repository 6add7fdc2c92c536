// ONNX TensorProto <-> kestrel::Tensor (numeric dtypes and strings, raw or
// typed fields, external data files).
#pragma once
#include <string>

#include "kestrel/tensor.h"
#include "onnx/onnx_pb.h"

namespace kestrel {

// Throws for unsupported element types (complex, 8-bit floats) with the tensor name.
DType dtype_from_onnx(int onnx_type, const std::string& what);
// The ONNX element type of a dtype (the inverse of dtype_from_onnx).
int onnx_type_from_dtype(DType t);
// `base_dir` resolves external data locations.
Tensor tensor_from_onnx(const onnx::TensorProto& proto, const std::string& base_dir);
// Reads a serialized TensorProto file (conformance test data).
Tensor read_onnx_tensor_file(const std::string& path, std::string* name = nullptr);
// A serialized onnx::SequenceProto of tensors (ONNX's test data) as a sequence (Tensor::sequence).
Tensor read_onnx_sequence_file(const std::string& path);
// A serialized onnx::OptionalProto (of a tensor or a sequence of tensors) as Tensor::optional.
Tensor read_onnx_optional_file(const std::string& path);

} // namespace kestrel
