// What the importer checks and fixes in a model's graphs before ONNX's
// checker sees them: their size against OnnxImportOptions' limits, and the
// order of their nodes (ONNX Runtime sorts a graph; so do we).
#pragma once
#include <string>

#include "kestrel/onnx.h"
#include "onnx/onnx_pb.h"

namespace kestrel::onnx_import {

// Fails, naming the limit and the option that raises it, when the model's
// graphs nest deeper than options.max_nesting_depth, or hold more than
// options.max_subgraphs subgraphs or options.max_nodes nodes in all.
void check_model_limits(const onnx::ModelProto& model, const OnnxImportOptions& options, const std::string& source);

// Puts the nodes of `graph` and of every subgraph in it in an order where each
// node comes after the nodes whose outputs it reads (its own inputs and the
// outer values its subgraphs read), keeping the file's order where it already
// is one. Fails on a cycle, naming a node on it.
void sort_nodes_topologically(onnx::GraphProto& graph, const std::string& source);

} // namespace kestrel::onnx_import
