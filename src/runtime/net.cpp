#include "kestrel/net.h"
#include "runtime/op_registry.h"

#include <fstream>
#include <set>
#include <sstream>

#include "graph/graph.h"
#include "graph/optimize.h"
#include "graph/weight_lists.h"

namespace kestrel {

namespace {

// Thrown (and caught) while probing whether any layer wants weights.
struct WeightsWanted {};
class ProbeReader : public WeightReader {
public:
    Tensor load(int64_t, WeightEncoding) override { throw WeightsWanted{}; }
    Tensor load_typed(const Shape&, DType) override { throw WeightsWanted{}; }
};

template <class Fn>
void with_layer_context(const Graph& g, int li, Fn&& fn)
{
    try {
        fn();
    } catch (const TooLargeError& e) {
        throw TooLargeError(g.where(li) + ": " + e.what());
    } catch (const Error& e) {
        throw Error(g.where(li) + ": " + e.what());
    }
}

} // namespace

Net::Net() = default;
Net::~Net() = default;
Net::Net(Net&&) noexcept = default;
Net& Net::operator=(Net&&) noexcept = default;

const Graph& Net::graph() const
{
    check(graph_ != nullptr, "no model loaded");
    return *graph_;
}

void Net::adopt_graph(Graph graph)
{
    graph_ = std::make_unique<Graph>(std::move(graph));
    instantiate_ops();
}

// Layer types ncnn always runs with their first bottom only (one_blob_only
// whatever their params): a .param may list more bottoms, which ncnn ignores,
// and so do we. Our ONNX forms of some of them (params 20 or 21 set) read
// more inputs and keep them; Cast's second input is CastLike's.
static void drop_ignored_bottoms(Graph& g)
{
    static const std::set<std::string> kOneBlob = {
        "AbsVal", "ArgMax", "BatchNorm", "Bias", "BNLL", "CELU", "Clip", "Convolution3D", "ConvolutionDepthWise3D",
        "CumulativeSum", "Deconvolution3D", "DeconvolutionDepthWise3D", "DeepCopy", "Dequantize", "Diag", "Dropout",
        "ELU", "Embed", "Erf", "Exp", "ExpandDims", "Flatten", "Flip", "Fold", "GELU", "GLU", "GroupNorm",
        "HardSigmoid", "HardSwish", "InnerProduct", "InstanceNorm", "InverseSpectrogram", "LayerNorm", "Log", "LRN",
        "Mish", "MVN", "Normalize", "Packing", "Padding", "Permute", "PixelShuffle", "Pooling", "Pooling1D",
        "Pooling3D", "Power", "PReLU", "Quantize", "Reduction", "ReLU", "Reorg", "Requantize", "RMSNorm", "SELU",
        "Shrink", "ShuffleChannel", "Sigmoid", "Softmax", "Softplus", "Spectrogram", "SPP", "Squeeze",
        "StatisticsPooling", "Swish", "TanH", "Threshold", "Tile", "UnaryOp", "Unfold"};
    bool changed = false;
    for (Layer& l : g.layers)
        if (l.bottoms.size() > 1 && kOneBlob.count(l.type) && !l.params.has(20) && !l.params.has(21)) {
            l.bottoms.resize(1);
            changed = true;
        }
    if (changed) g.finalize();
}

void Net::instantiate_ops()
{
    Graph& g = *graph_;
    weights_loaded_ = true;
    drop_ignored_bottoms(g);
    install_builtin_ops(); // the fusions below ask for layer traits
    if (load_options_.fuse_layers) {
        OptimizeReport report;
        if (load_options_.fuse_residuals) fuse_residual_into_conv(g, report, /*with_ops=*/false);
        fuse_activation_into_conv(g, report, /*with_ops=*/false);
        fuse_padding_into_conv(g, report, /*with_ops=*/false);
    }
    for (Layer& l : g.layers) l.op = create_op(l.type);
    for (int li = 0; li < static_cast<int>(g.layers.size()); ++li) {
        Layer& l = g.layers[li];
        // Front-ends list every unknown type first (frontend/common/unsupported_ops.h).
        check(l.op != nullptr, g.where(li), ": unknown layer type '", l.type, "'");
        l.op->type = l.type;
        l.op->name = l.name;
        with_layer_context(g, li, [&] { l.op->load_param(l.params); });
        // A model whose layers take no weights is complete without a .bin.
        ProbeReader probe;
        try {
            l.op->load_model(probe);
        } catch (const WeightsWanted&) {
            weights_loaded_ = false;
        }
    }
}

void Net::load_weights(WeightReader& reader, const std::function<std::vector<StoredWeight>()>& take)
{
    Graph& g = *graph_;
    reader.options = load_options_;
    const bool keep = load_options_.keep_loaded_weights;
    for (int li = 0; li < static_cast<int>(g.layers.size()); ++li) {
        Layer& l = g.layers[li];
        with_layer_context(g, li, [&] { l.op->load_model(reader); });
        l.weights = take();
        if (!keep) {
            l.weights = {};
            l.op->weights_released();
        }
    }
    weights_loaded_ = true;
    weights_released_ = !keep;
}

void Net::load_model_zeros()
{
    check(graph_ != nullptr, "load_model_zeros: load the .param first");
    ZeroWeightReader reader(max_weight_bytes_);
    load_weights(reader, [&] {
        std::vector<StoredWeight> w;
        w.swap(reader.recorded);
        return w;
    });
}

void Net::set_source_name(const std::string& name)
{
    check(graph_ != nullptr, "set_source_name: the net has no graph yet");
    graph_->source = name;
}

void Net::add_layer(const std::string& type, const std::string& name, const std::vector<std::string>& bottoms,
                    const std::vector<std::string>& tops, const ParamDict& params, const std::vector<Tensor>& weights)
{
    if (!graph_) {
        graph_ = std::make_unique<Graph>();
        graph_->source = "<built in code>";
        weights_loaded_ = true;
    }
    Graph& g = *graph_;
    const int li = static_cast<int>(g.layers.size());
    Layer l;
    l.type = type;
    l.name = name;
    l.params = params;
    for (const auto& b : bottoms) {
        const int bi = g.find_blob(b);
        check(bi >= 0, "add_layer ", type, " '", name, "': bottom blob '", b, "' is not produced by an earlier layer");
        l.bottoms.push_back(bi);
    }
    for (const auto& t : tops) {
        check(g.find_blob(t) < 0, "add_layer ", type, " '", name, "': blob '", t, "' is produced twice");
        g.blob_index[t] = static_cast<int>(g.blobs.size());
        g.blobs.push_back(Blob{t, li, {}});
        l.tops.push_back(g.blob_index[t]);
    }
    l.op = create_op(type);
    check(l.op != nullptr, "add_layer: unknown layer type '", type, "'");
    l.op->type = type;
    l.op->name = name;
    g.layers.push_back(std::move(l));
    Layer& added = g.layers.back();
    with_layer_context(g, li, [&] {
        added.op->load_param(added.params);
        TensorListReader reader(weights);
        reader.options = load_options_;
        added.op->load_model(reader);
        check(reader.unused() == 0, reader.unused(), " weights given but not used by the layer");
        added.weights = reader.recorded;
    });
}

void Net::set_output_names(const std::vector<std::string>& names)
{
    check(graph_ != nullptr, "set_output_names: no layers added");
    graph_->declared_outputs = names;
    graph_->finalize();
}

void Net::finish_graph()
{
    check(graph_ != nullptr, "finish_graph: no layers added");
    graph_->finalize();
}

std::vector<std::string> Net::optimize(const std::map<std::string, Shape>& shape_hints)
{
    check(graph_ != nullptr, "optimize: no model loaded");
    check(weights_loaded_, "optimize: load the weights first");
    check(!weights_released_, "optimize: the weights were released (release_weights)");
    graph_->load_options = load_options_;
    return optimize_graph(*graph_, shape_hints).applied;
}

void Net::set_load_options(const LoadOptions& options) { load_options_ = options; }

void Net::release_weights()
{
    check(graph_ != nullptr, "release_weights: no model loaded");
    for (Layer& l : graph_->layers) {
        l.weights = {};
        if (l.op) l.op->weights_released();
    }
    weights_released_ = true;
}

std::vector<std::string> Net::input_names() const
{
    std::vector<std::string> v;
    for (int b : graph().inputs) v.push_back(graph().blobs[b].name);
    return v;
}

std::vector<std::string> Net::output_names() const
{
    std::vector<std::string> v;
    for (int b : graph().outputs) v.push_back(graph().blobs[b].name);
    return v;
}

DType Net::input_dtype(const std::string& name) const
{
    const Graph& g = graph();
    const int b = g.find_blob(name);
    check(b >= 0 && g.blobs[b].producer >= 0 && g.layers[g.blobs[b].producer].type == "Input", "'", name,
          "' is not an input of the model");
    return static_cast<DType>(g.layers[g.blobs[b].producer].params.get_int(21, static_cast<int>(DType::F32)));
}

bool Net::has_blob(const std::string& name) const { return graph_ && graph_->find_blob(name) >= 0; }

Shape Net::input_shape(const std::string& name) const
{
    const Graph& g = graph();
    const int b = g.find_blob(name);
    check(b >= 0 && g.blobs[b].producer >= 0 && g.layers[g.blobs[b].producer].type == "Input", "'", name,
          "' is not an input of the model");
    const ParamDict& p = g.layers[g.blobs[b].producer].params;
    // Our extension: 20 = dims of any rank, outermost first (-1: varies).
    if (p.has(20)) {
        const std::vector<int> dims = p.get_ints(20);
        return Shape(dims.begin(), dims.end());
    }
    // ncnn Input params: 0=w 1=h 11=d 2=c; absent/0 dims are not declared.
    const int w = p.get_int(0, 0), h = p.get_int(1, 0), d = p.get_int(11, 0), c = p.get_int(2, 0);
    if (w <= 0) return {};
    if (h <= 0) return {w};
    if (c <= 0) return {h, w};
    if (d <= 0) return {c, h, w};
    return {c, d, h, w};
}

} // namespace kestrel
