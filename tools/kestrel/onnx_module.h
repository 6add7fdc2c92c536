// The ONNX importer of the `kestrel` command, in a module of its own so that
// running an ncnn model never loads protobuf and libonnx.
#pragma once
#include <string>

#include "kestrel/onnx.h"

namespace kestrel::cli {

// kestrel::load_onnx through the importer module; fails with a clear message
// when the module is missing or the build has no ONNX support.
void import_onnx(Net& net, const std::string& path, const OnnxImportOptions& options);

} // namespace kestrel::cli
