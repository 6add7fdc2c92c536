// ncnn_form(): a model imported from ONNX (a batch of one) rewritten in
// ncnn's own conventions, so that ncnn itself loads and runs the .param/.bin
// Kestrel writes from it (kestrel convert --ncnn, kestrel quantize).
#pragma once
#include "kestrel/net.h"

namespace kestrel {

// The same computation, ncnn's way:
// - no batch axis: Input's ONNX dims (20=) become 0=w 1=h 11=d 2=c, our
//   featmask bits (kFeatmaskBatched, kFeatmaskSharedInputs) go, and the axis
//   params of Concat, Softmax and Flatten count from the first non-batch axis;
// - BinaryOp without our ONNX broadcasting (20=1) where its operands have one
//   shape, the only case where ncnn's rules and ONNX's agree for every rank;
// - a Split layer for every blob read more than once (ncnn's blobs have one
//   consumer each; docs/ncnn-compat-spec.md 1.1).
// Input shapes are the declared ones (a symbolic batch taken as 1). Throws
// kestrel::Error naming the first layer that has no ncnn form and why.
Net ncnn_form(const Net& net);

} // namespace kestrel
