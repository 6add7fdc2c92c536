// ONNX shape inference (libonnx) guarded against the inputs it mishandles.
#pragma once

#include <string>

#include "onnx/onnx_pb.h"

namespace kestrel::onnx_import {

// Runs onnx::shape_inference::InferShapes on `model`, after rejecting (with an
// error naming `source` and the node) attributes that libonnx's inference
// functions use unchecked, such as a LayerNormalization axis far outside the
// input's rank (an out-of-bounds read in libonnx 1.12, found by fuzz_onnx).
// Inference runs in a forked child process (POSIX), so a crash or hang inside
// libonnx on some other malformed input costs the hints, not the process.
// Failures of inference itself are ignored: it only adds hints.
void infer_shapes_safely(onnx::ModelProto& model, const std::string& source);

// A node with graph attributes (If branches).
bool has_subgraphs(const onnx::NodeProto& node);

} // namespace kestrel::onnx_import
