#include "frontend/ncnn/export_form.h"

#include <functional>
#include <map>

#include "graph/graph.h"
#include "ops/conv/conv_params.h"
#include "runtime/analysis.h"

namespace kestrel {

namespace {

// One layer on its way to ncnn: its params (rewritten in place) and the
// shapes, batch axis included, of what it reads and writes.
struct LayerForm {
    const Graph& graph;
    int index;
    const LayerReport& shapes;
    ParamDict& params;

    const Layer& layer() const { return graph.layers[static_cast<size_t>(index)]; }
    [[noreturn]] void refuse(const std::string& why) const
    {
        fail(graph.where(index), ": has no ncnn form: ", why);
    }
    const Shape& input_shape(size_t i = 0) const { return shapes.inputs.at(i).shape; }
    // An ONNX axis (batch axis 0) as ncnn counts it (from the first non-batch axis).
    int unbatched_axis(int id, int default_axis) const
    {
        const int rank = static_cast<int>(input_shape().size());
        const int given = params.get_int(id, default_axis);
        const int axis = given < 0 ? given + rank : given;
        if (axis < 1 || axis >= rank) refuse("axis " + std::to_string(given) + " is not past the batch axis");
        return axis - 1;
    }
    // Layers that work per channel see ncnn's unbatched blobs only when the
    // runtime runs them per sample.
    void require_batched() const
    {
        if (!layer().batched()) refuse("it reads the batch axis as data");
    }
};

using Rewrite = std::function<void(LayerForm&)>;

void elementwise(LayerForm&) {}

void per_sample(LayerForm& f) { f.require_batched(); }

void plain_convolution(LayerForm& f)
{
    f.require_batched();
    if (f.params.get_int(kResidualParam, 0) != 0) f.refuse("a residual sum fused in (our 20=1)");
    if (f.params.get_int(19, 0) != 0) f.refuse("its weights arrive as an input");
}

// ncnn's InnerProduct flattens a 1-D blob: the batch of one of a [1, K] input.
void unbatch_inner_product(LayerForm& f)
{
    if (!f.layer().batched() && f.input_shape().size() != 2) f.refuse("its input is not [1, K]");
}

// ONNX dims [1, ...] (20=, -1 where symbolic) as ncnn's 0=w 1=h 11=d 2=c.
void unbatch_input(LayerForm& f)
{
    if (f.params.get_int(21, 0) != static_cast<int>(DType::F32)) f.refuse("its input is not float32");
    const Shape& shape = f.shapes.outputs.at(0).shape;
    const size_t rank = shape.size() - 1; // without the batch axis
    if (rank < 1 || rank > 4) f.refuse("ncnn blobs have 1 to 4 axes besides the batch");
    static const std::vector<int> ids_from_last[] = {{0}, {0, 1}, {0, 1, 2}, {0, 1, 11, 2}}; // w, h, (d,) c
    for (size_t k = 0; k < rank; ++k)
        f.params.set_int(ids_from_last[rank - 1][k], static_cast<int>(shape[shape.size() - 1 - k]));
    f.params.erase(20);
    f.params.erase(21);
}

void unbatch_axis_param(LayerForm& f) { f.params.set_int(0, f.unbatched_axis(0, 0)); }

void unbatch_flatten(LayerForm& f)
{
    if (!f.params.has(0)) return; // ncnn's own Flatten
    if (f.unbatched_axis(0, 1) != 0) f.refuse("it keeps axes after the batch axis apart");
    f.params.erase(0);
}

void ncnn_broadcasting(LayerForm& f)
{
    if (f.params.get_int(20, 0) == 0) return;
    if (f.shapes.inputs.size() == 2 && f.input_shape(0) != f.input_shape(1))
        f.refuse("its operands' shapes differ, and ncnn broadcasts them by other rules than ONNX");
    f.params.erase(20);
}

// The layers that have an ncnn form, and the rewrite that gives it (after
// the batch axis and our featmask bits are gone).
const std::map<std::string, Rewrite>& rewrites()
{
    static const std::map<std::string, Rewrite> table = {
        {"Input", unbatch_input},
        {"Convolution", plain_convolution},
        {"ConvolutionDepthWise", plain_convolution},
        {"Deconvolution", plain_convolution},
        {"DeconvolutionDepthWise", plain_convolution},
        {"Pooling", per_sample},
        {"BatchNorm", per_sample},
        {"Scale", per_sample},
        {"PReLU", per_sample},
        {"LRN", per_sample},
        {"InnerProduct", unbatch_inner_product},
        {"ReLU", elementwise},
        {"Clip", elementwise},
        {"Sigmoid", elementwise},
        {"TanH", elementwise},
        {"ELU", elementwise},
        {"Mish", elementwise},
        {"Swish", elementwise},
        {"HardSwish", elementwise},
        {"HardSigmoid", elementwise},
        {"Dropout", elementwise},
        {"Split", elementwise},
        {"BinaryOp", ncnn_broadcasting},
        {"Concat", unbatch_axis_param},
        {"Softmax", unbatch_axis_param},
        {"Flatten", unbatch_flatten},
    };
    return table;
}

void check_batch_of_one(const LayerForm& f)
{
    for (const auto* descs : {&f.shapes.inputs, &f.shapes.outputs})
        for (const TensorDesc& d : *descs)
            if (d.shape.size() < 2 || d.shape[0] != 1)
                f.refuse("a blob of shape " + shape_str(d.shape) + " has no batch axis of one");
}

void drop_our_featmask_bits(ParamDict& params)
{
    const int mask = params.get_int(31, 0) & ~(kFeatmaskBatched | kFeatmaskSharedInputs);
    if (mask != 0) params.set_int(31, mask);
    else params.erase(31);
}

// ncnn's layers here read ids up to 19 and the featmask (31); the rest are ours.
void check_ncnn_params(const LayerForm& f)
{
    for (int id : f.params.ids())
        if (id >= 20 && id != 31) f.refuse("param " + std::to_string(id) + " is ours, not ncnn's");
}

std::map<std::string, TensorDesc> declared_inputs(const Net& net)
{
    std::map<std::string, TensorDesc> inputs;
    for (const std::string& name : net.input_names()) {
        Shape shape = net.input_shape(name);
        check(!shape.empty(), net.graph().source, ": input '", name, "' declares no shape");
        for (int64_t& d : shape)
            if (d < 0) d = 1;
        inputs[name] = TensorDesc(shape, net.input_dtype(name));
    }
    return inputs;
}

// The layers the outputs need, in order, with their shapes; the Input
// layers (which the runtime does not run) with their declared shapes.
std::vector<LayerReport> layers_with_shapes(const Net& net)
{
    const Graph& g = net.graph();
    const std::map<std::string, TensorDesc> inputs = declared_inputs(net);
    std::vector<LayerReport> layers;
    for (int b : g.inputs) {
        LayerReport r;
        r.layer = g.blobs[static_cast<size_t>(b)].producer;
        r.outputs.push_back(inputs.at(g.blobs[static_cast<size_t>(b)].name));
        layers.push_back(r);
    }
    const ModelReport report = analyze_model(net, inputs);
    layers.insert(layers.end(), report.layers.begin(), report.layers.end());
    return layers;
}

} // namespace

Net ncnn_form(const Net& net)
{
    const Graph& g = net.graph();
    const std::vector<LayerReport> layers = layers_with_shapes(net);
    std::map<int, int> reads; // blob -> how many inputs of kept layers it is
    for (const LayerReport& r : layers)
        for (int b : g.layers[static_cast<size_t>(r.layer)].bottoms) ++reads[b];

    Net out;
    LoadOptions lo = net.load_options();
    lo.keep_loaded_weights = true;
    out.set_load_options(lo);
    std::map<int, std::vector<std::string>> split_tops; // blob -> the Split tops its readers take in turn
    int splits = 0;
    for (const LayerReport& r : layers) {        const Layer& l = g.layers[static_cast<size_t>(r.layer)];
        ParamDict params = l.params;
        LayerForm form{g, r.layer, r, params};
        const auto rewrite = rewrites().find(l.type);
        if (rewrite == rewrites().end()) form.refuse("the ncnn form has no layer of this type (docs/onnx.md lists those it has)");
        rewrite->second(form);
        check_batch_of_one(form);
        drop_our_featmask_bits(params);
        check_ncnn_params(form);

        std::vector<std::string> bottoms, tops;
        for (int b : l.bottoms) {
            std::vector<std::string>& taken = split_tops[b];
            if (taken.empty()) bottoms.push_back(g.blobs[static_cast<size_t>(b)].name);
            else bottoms.push_back(taken.back()), taken.pop_back();
        }
        for (int t : l.tops) tops.push_back(g.blobs[static_cast<size_t>(t)].name);
        out.add_layer(l.type, l.name, bottoms, tops, params, l.weight_values());
        for (int t : l.tops) {
            const int n = reads[t];
            if (n < 2) continue;
            const std::string split = "splitncnn_" + std::to_string(splits++);
            std::vector<std::string>& names = split_tops[t];
            for (int k = n - 1; k >= 0; --k) names.push_back(g.blobs[static_cast<size_t>(t)].name + "_" + split + "_" + std::to_string(k));
            out.add_layer("Split", split, {g.blobs[static_cast<size_t>(t)].name}, {names.rbegin(), names.rend()}, {}, {});
        }
    }
    out.set_source_name(g.source);
    if (!g.declared_outputs.empty()) out.set_output_names(g.declared_outputs);
    else out.finish_graph();
    return out;
}

} // namespace kestrel
