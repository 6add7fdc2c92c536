// Net: a loaded model (graph + weights), immutable once loaded and shareable
// by any number of Sessions on any threads.
// Session: one inference context. Set inputs by name, get any blob by name; only
// the layers that blob needs run. Shapes are inferred and memory is planned once
// per set of input shapes (prepare once, run many).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kestrel/op.h"
#include "kestrel/options.h"
#include "kestrel/param_dict.h"
#include "kestrel/tensor.h"

namespace kestrel {

struct Graph;
struct ModelReport;
struct StoredWeight;
class ByteSource;

class Net {
public:
    Net();
    ~Net();
    Net(Net&&) noexcept;
    Net& operator=(Net&&) noexcept;

    // ncnn .param text (file or in memory) and .param.bin.
    void load_param(const std::string& path);
    void load_param_mem(const std::string& text, const std::string& source_name = "<memory>");
    void load_param_bin(const std::string& path);
    void load_param_bin_mem(const void* data, size_t size, const std::string& source_name = "<memory>");

    // ncnn .bin weights, after the param. A reader callback fills `dst` with up
    // to `n` bytes and returns how many it wrote (0 at end of data).
    void load_model(const std::string& path);
    void load_model_mem(const void* data, size_t size, const std::string& source_name = "<memory>");
    void load_model(const std::function<size_t(void* dst, size_t n)>& reader, const std::string& source_name = "<reader>");
    // Every weight zero (benchmarking a structure without weights, as benchncnn does).
    void load_model_zeros();

    // Build a graph in code: layers in topological order, then finish_graph().
    // `weights` are handed to the op's load_model in the order it asks for them.
    void add_layer(const std::string& type, const std::string& name, const std::vector<std::string>& bottoms,
                   const std::vector<std::string>& tops, const ParamDict& params = {},
                   const std::vector<Tensor>& weights = {});
    void finish_graph();
    // The name messages give the model by (a file name; "<built in code>" for add_layer's graphs).
    void set_source_name(const std::string& name);
    // Names the graph outputs explicitly (default: blobs produced and never consumed).
    void set_output_names(const std::vector<std::string>& names);

    // Graph optimizer passes (identity/dead-layer removal, constant folding,
    // BatchNorm and activation fusion into convolutions, MatMul -> InnerProduct,
    // LayerNorm/GELU/Swish/HardSwish patterns). `shape_hints` (blob name ->
    // shape, -1 for a dim that may vary) lets the rewrites that are exact only
    // for some shapes fire (MatMul, LayerNorm); the ONNX importer passes the
    // shapes ONNX infers. Returns one line per rewrite.
    std::vector<std::string> optimize(const std::map<std::string, Shape>& shape_hints = {});

    // Drops the graph's copy of the weights as loaded, keeping only what the
    // layers hold for inference (often a packed form: then the loaded values
    // stop taking memory twice, as with ncnn's lightmode). Afterwards
    // optimize(), save_model() and model_bytes() refuse to run.
    void release_weights();

    void save_param(const std::string& path) const;
    void save_model(const std::string& path) const;
    // What save_model writes: the weights in .bin encoding.
    std::vector<uint8_t> model_bytes() const;
    std::string param_text() const;

    std::vector<std::string> input_names() const;
    std::vector<std::string> output_names() const;
    // Declared input shape from the Input layer's params (empty when not declared;
    // -1 marks a dimension that may vary, e.g. a symbolic ONNX batch).
    Shape input_shape(const std::string& name) const;
    DType input_dtype(const std::string& name) const;
    bool has_blob(const std::string& name) const;
    // True while some layer takes weights and none were loaded yet.
    bool needs_weights() const { return !weights_loaded_; }

    const Graph& graph() const;

    // Any single weight larger than this is refused before it is allocated
    // (a "too large" kestrel::TooLargeError). Default 4 GiB.
    void set_max_weight_bytes(int64_t bytes) { max_weight_bytes_ = bytes; }
    // How weights are prepared (options.h); takes effect for weights loaded after it.
    void set_load_options(const LoadOptions& options);
    const LoadOptions& load_options() const { return load_options_; }

private:
    int64_t max_weight_bytes_ = int64_t(4) << 30;
    LoadOptions load_options_;
    friend class Session;
    std::unique_ptr<Graph> graph_;
    bool weights_loaded_ = false;
    bool weights_released_ = false;
    // A front-end's parsed graph becomes this net's (its ops made, params read).
    void adopt_graph(Graph graph);
    void instantiate_ops();
    // Every layer's weights from `reader` in layer order; `take` hands over
    // what it recorded for the layer (kept unless the load options drop it).
    void load_weights(WeightReader& reader, const std::function<std::vector<StoredWeight>()>& take);
    void load_ncnn_bin(ByteSource& source, const std::string& source_name); // the ncnn front-end's
};

// Passed to per-op callbacks (debugging, profiling).
struct OpEvent {
    const std::string& layer_name;
    const std::string& layer_type;
    const std::vector<Tensor>& inputs;
    const std::vector<Tensor>& outputs; // not yet computed in the "before" callback
    // In the "after" callback of a layer that ran on Options::backend's device:
    // the device's own time for it (its timestamps, ms; transfers aside). -1
    // otherwise, or when the device does not say.
    double device_ms = -1;
};
using OpCallback = std::function<void(const OpEvent&)>;

class Session {
public:
    explicit Session(const Net& net, const Options& options = {});
    ~Session();
    Session(Session&&) noexcept;

    // The tensor is referenced, not copied; keep it unchanged until the run ends.
    // A uint16 tensor given for an input declared bfloat16 is taken as its
    // bits; a tensor or sequence given for an optional input, as holding it.
    void set_input(const std::string& name, const Tensor& tensor);
    // Computes (if not yet computed since the inputs were set) and returns the blob.
    // The result stays valid after later runs (it owns its storage).
    Tensor get(const std::string& blob_name);
    // Computes several blobs in one pass.
    std::vector<Tensor> run(const std::vector<std::string>& blob_names);

    // Callbacks around every layer's forward. They see every blob plain (the
    // session then plans without channel blocks), or with `stored_layouts`
    // as the plan stores it (a blocked blob as [..., C/B, H, W, B], see
    // Layout), so that timings are those of an ordinary run (bench --profile).
    void set_callbacks(OpCallback before, OpCallback after, bool stored_layouts = false);
    // Peak activation bytes of the last plan (arena size plus outputs).
    int64_t peak_bytes() const;
    // Where the last run ran each layer it ran: the device's name for
    // layers on Options::backend's device, "view" for layers whose outputs
    // are views of their input (Split, Reshape, ...: no work), "cpu" for the rest.
    std::map<std::string, std::string> layer_devices() const;
    // The bytes each layer on a device copied between the host and the
    // device in the last run (its inputs from CPU layers or the caller, its
    // outputs for CPU layers, the caller or callbacks; tensors passed between
    // device layers stay on the device).
    std::map<std::string, int64_t> layer_transfer_bytes() const;
    const Options& options() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    friend ModelReport analyze_model(const Net&, const std::map<std::string, TensorDesc>&, const Options&);
};

} // namespace kestrel
