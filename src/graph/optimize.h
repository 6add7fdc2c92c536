// Graph optimizer: passes over the IR that keep outputs equal (up to float
// rounding for the folding passes). Front-ends run them after conversion;
// Net::optimize() runs them on any loaded model.
#pragma once
#include <string>
#include <vector>

#include "graph/graph.h"

namespace kestrel {

struct OptimizeReport {
    std::vector<std::string> applied; // one line per rewrite, for `kestrel convert -v` and tests
};

// Each pass returns how many rewrites it made.
int remove_identity_layers(Graph& g, OptimizeReport& report);   // Noop, Dropout with scale 1
int fold_constant_layers(Graph& g, OptimizeReport& report);     // layers whose inputs are all Constant
int fold_batchnorm_into_conv(Graph& g, OptimizeReport& report); // Conv/ConvDW/InnerProduct -> BatchNorm
int fuse_activation_into_conv(Graph& g, OptimizeReport& report);// Conv/ConvDW/InnerProduct -> ReLU/Clip/...
int remove_dead_layers(Graph& g, OptimizeReport& report);       // nothing reaches a graph output

// All passes, to a fixed point.
OptimizeReport optimize_graph(Graph& g);

// Re-creates a layer's op from its params and stored weights (after a pass edits them).
void rebuild_layer(Graph& g, int layer, const std::vector<Tensor>& weights);

} // namespace kestrel
