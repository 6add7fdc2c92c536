// Static analysis of a model for given input shapes (no data needed): each
// layer's inferred shapes, MACs and weight bytes, and the memory plan's peak.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kestrel/net.h"

namespace kestrel {

struct LayerReport {
    int layer = -1; // index into graph().layers
    std::vector<TensorDesc> inputs, outputs;
    int64_t macs = 0;
    int64_t weight_bytes = 0;
    // Where it runs: "cpu", the device's name (Options::backend), "view"
    // (its outputs are views of its input: no work anywhere), or "" when it
    // is evaluated while planning (its output is then known in advance).
    // Layers whose shapes are known only at run time are planned then and
    // count as "cpu" here (Session::layer_devices says where they ran).
    std::string device;
};

struct ModelReport {
    std::vector<LayerReport> layers; // every layer needed for the graph outputs, in order
    int64_t peak_bytes = 0;          // activations: planned arena plus outputs
    int64_t total_macs = 0;
    int64_t total_weight_bytes = 0;
};

ModelReport analyze_model(const Net& net, const std::map<std::string, TensorDesc>& inputs,
                          const Options& options = {});

} // namespace kestrel
