// The graph IR every front-end produces and the runtime executes: layers in
// topological order, connected through named blobs. ggml-sized on purpose.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kestrel/options.h"
#include "kestrel/param_dict.h"
#include "kestrel/tensor.h"
#include "kestrel/weights.h"

namespace kestrel {

// The layer's instance, made by the runtime from the op registry; the IR
// only carries it (shared, so the IR needs no op definition).
class Op;

// One weight buffer exactly as it came from (and goes back to) the .bin.
struct StoredWeight {
    Tensor value;                 // decoded: F32, or I8 for int8-tagged data
    WeightEncoding encoding = WeightEncoding::Raw;
    std::vector<uint8_t> original; // tag + payload when the tag was not plain fp32
};

// Our featmask bit (param 31, a bitmask ncnn reads only bits 1..128 of): the
// layer's inputs carry a leading batch axis; the runtime runs the layer once
// per sample (as ncnn's NCNN_BATCH loop does), so every ncnn layer takes a batch.
constexpr int kFeatmaskBatched = 1 << 16;
// With kFeatmaskBatched: only input 0 carries the batch axis; the other inputs
// (weights given as inputs) are passed whole to every sample.
constexpr int kFeatmaskSharedInputs = 1 << 17;

struct Layer {
    std::string type;
    std::string name;
    std::vector<int> bottoms; // blob indices
    std::vector<int> tops;
    ParamDict params;
    std::shared_ptr<Op> op;
    std::vector<StoredWeight> weights;
    int line = 0; // line in the .param text (0 when not from text)
    bool batched() const { return (params.get_int(31, 0) & kFeatmaskBatched) != 0; }
    bool batch_input0_only() const { return (params.get_int(31, 0) & kFeatmaskSharedInputs) != 0; }
    // The weights' decoded values, in order (to rebuild or copy the layer).
    std::vector<Tensor> weight_values() const
    {
        std::vector<Tensor> v;
        for (const StoredWeight& w : weights) v.push_back(w.value);
        return v;
    }
};

struct Blob {
    std::string name;
    int producer = -1;           // layer index
    std::vector<int> consumers;  // layer indices
};

struct Graph {
    std::string source; // file name (or "<memory>") for messages
    std::vector<Layer> layers;
    std::vector<Blob> blobs;
    std::map<std::string, int> blob_index;
    std::vector<int> inputs;  // tops of Input layers
    std::vector<int> outputs; // produced, never consumed (or as declared)
    std::vector<std::string> declared_outputs; // front-ends that name their outputs (ONNX)
    LoadOptions load_options; // the Net's, for layers rebuilt with new weights (optimizer)

    int find_blob(const std::string& name) const; // -1 when absent
    // "file:line: Convolution 'conv1'" for messages.
    std::string where(int layer) const;
    // Links consumers/producers, finds inputs/outputs; validates the structure.
    void finalize();
};

} // namespace kestrel
