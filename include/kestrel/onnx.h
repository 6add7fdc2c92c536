// ONNX import: converts an ONNX model (opsets 7-18, external data supported)
// into a Net, in memory. Part of the optional `kestrel_onnx` library (needs
// Debian's libonnx-dev and libprotobuf-dev); the runtime itself does not.
#pragma once
#include <cstdint>
#include <string>

#include "kestrel/net.h"

namespace kestrel {

struct OnnxImportOptions {
    // Graph optimizer passes (constant folding, fusion, dead-node removal).
    bool optimize = true;
    // Bounds on what a model's graphs cost to convert (If, Loop and Scan carry
    // subgraphs; each is converted and shape-inferred on its own). They stop
    // hostile files, at values no published model reaches; an error names the
    // one exceeded. `kestrel`: --onnx-limit depth=N|subgraphs=N|nodes=N.
    int max_nesting_depth = 64;  // subgraphs inside subgraphs
    int64_t max_subgraphs = 10000; // in all graphs
    int64_t max_nodes = 4000000;   // in all graphs
};

// Replaces whatever `net` held. Throws kestrel::Error naming the node, its op
// type and the opset when something cannot be converted.
void load_onnx(Net& net, const std::string& path, const OnnxImportOptions& options = {});
void load_onnx_mem(Net& net, const void* data, size_t size, const std::string& source_name,
                   const std::string& external_data_dir = ".", const OnnxImportOptions& options = {});

// Makes load_model_file (kestrel/model_file.h) read ONNX models with these
// options (ModelFileOptions::optimize overrides theirs).
void register_onnx_loader(const OnnxImportOptions& options = {});

} // namespace kestrel
