// TensorFlow Lite models (.tflite flatbuffers) into a Net. The format is
// also told by its content through load_model_file (model_file.h); these
// are for memory and for callers that know what they hold.
#pragma once
#include <cstddef>
#include <string>

#include "kestrel/net.h"

namespace kestrel {

struct TfliteImportOptions {
    // Run the graph optimizer (fusions, constant folding) after converting.
    bool optimize = true;
    // Refuse a constant the file holds or the conversion makes (densified
    // weights, FILL / ZEROS_LIKE results, a transposed convolution's full
    // plane) larger than this, before allocating (Options::max_tensor_bytes' default).
    int64_t max_tensor_bytes = int64_t(4) << 30;
};

// Replaces what `net` held with the model in `path` / in `size` bytes at
// `data` (`source` names it in messages). The file is checked by the
// flatbuffer verifier before any field is read. Inputs and outputs keep the
// model's shapes and layout (NHWC images stay NHWC). Throws kestrel::Error
// naming the file, the operator and the reason.
void load_tflite(Net& net, const std::string& path, const TfliteImportOptions& options = {});
void load_tflite_mem(Net& net, const void* data, size_t size, const std::string& source,
                     const TfliteImportOptions& options = {});
// Whether this build has the front-end (flatbuffers' headers at build time).
bool tflite_supported();

} // namespace kestrel
