// An ncnn model from its files: the .param (text or binary) and the weights
// beside it (X.param -> X.bin) or named; the ncnn front-end's entry for
// load_model_file (include/kestrel/model_file.h).
#pragma once
#include <string>

#include "kestrel/model_file.h"

namespace kestrel {

// Returns the weights file read (empty: none needed, or zeros).
std::string load_ncnn_model(Net& net, const std::string& path, ModelFormat format, const ModelFileOptions& options);

} // namespace kestrel
