// float16 models (the common "fp16" export: weights and activations float16
// throughout) computed in float32, as ONNX Runtime's CPU provider runs the ops
// it has no float16 kernel for (its cast-insertion pass, with the casts between
// two such ops removed): the model is rewritten before conversion so that
//  - float16 initializers, constants and attribute tensors become float32
//    (exactly: every float16 value is a float32 value);
//  - float16 graph inputs keep their type and name, and are cast to float32
//    once; float16 graph outputs are cast from float32 once, keeping theirs;
//  - a Cast to float16 inside the graph rounds to float16 and back, so the
//    model's own roundings stay;
//  - dtype attributes asking for float16 (EyeLike, the Random ops) ask for float32.
// Subgraphs (If, Loop, Scan) compute in float32 throughout.
#pragma once

#include "onnx/onnx_pb.h"

namespace kestrel::onnx_import {

// The rewrite above, in place (nothing changes in a model without float16).
void compute_float16_in_float32(onnx::ModelProto& model);

} // namespace kestrel::onnx_import
