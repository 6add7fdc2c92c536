// The `kestrel` command's ONNX importer as a module (see onnx_module.cpp):
// the converter, protobuf and libonnx, loaded only when a model is .onnx.
#include "kestrel/onnx.h"

extern "C" void kestrel_onnx_import(kestrel::Net& net, const std::string& path, const kestrel::OnnxImportOptions& options)
{
    kestrel::load_onnx(net, path, options);
}
