// Static analysis of a model for given input shapes (no data needed): each
// layer's inferred shapes, MACs and weight bytes, and the session's plan for
// those shapes (runtime/plan.h) as a value: where each step runs, its blobs'
// layouts, precision and places in the arena, and the plan's peak.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "kestrel/net.h"

namespace kestrel {

// Where a blob's bytes live in the plan.
struct BlobPlacement {
    int blob = -1;
    // "input" (the caller's tensor), "arena" (at `offset` in the session's
    // arena), "owned" (a buffer of its own: asked-for outputs, run-time
    // shapes), "view" (of blob `of`), "known" (computed while planning).
    std::string home;
    int64_t offset = -1; // arena byte offset ("arena"); -1 otherwise
    int64_t bytes = 0;   // as stored (a blocked layout pads the channels)
    int of = -1;         // "view": the blob whose bytes it shows
};

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
    // The plan's step, when it is one (not evaluated while planning): its
    // blobs' places, its scratch's arena offset and size, and whether it
    // writes output 0 over input 0.
    bool planned_step = false;
    std::vector<BlobPlacement> input_places, output_places;
    int64_t scratch_offset = -1, scratch_bytes = 0;
    bool in_place = false;
};

struct ModelReport {
    std::vector<LayerReport> layers; // every layer needed for the graph outputs, in order
    int64_t peak_bytes = 0;          // activations: planned arena plus outputs
    int64_t arena_bytes = 0;         // of which the arena
    bool bf16 = false;               // precision BF16 taken (the CPU multiplies bfloat16)
    int64_t total_macs = 0;
    int64_t total_weight_bytes = 0;
};

ModelReport analyze_model(const Net& net, const std::map<std::string, TensorDesc>& inputs,
                          const Options& options = {});

} // namespace kestrel
