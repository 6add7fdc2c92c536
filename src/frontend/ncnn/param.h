// Readers and writer for ncnn's graph files: the .param text form and the
// binary .param.bin form. Both produce a Graph whose layers carry their
// ParamDict; ops are instantiated afterwards (graph/instantiate.h).
#pragma once
#include <string>

#include "graph/graph.h"

namespace kestrel {

// `source` names the text in error messages (file path or "<memory>").
Graph parse_ncnn_param_text(const std::string& text, const std::string& source);
Graph parse_ncnn_param_bin(const void* data, size_t size, const std::string& source);
// Text form of a graph; parse_ncnn_param_text(write(g)) gives the same graph.
std::string write_ncnn_param_text(const Graph& graph);

// ncnn's built-in layer registry order, which .param.bin type indices refer to.
const char* ncnn_layer_type_name(int type_index); // nullptr when out of range

} // namespace kestrel
