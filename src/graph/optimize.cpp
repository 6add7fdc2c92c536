#include "graph/optimize.h"

#include <cmath>
#include <set>

#include "graph/ncnn_model_bin.h"
#include "ops/activation/activation.h"

namespace kestrel {

bool is_graph_output(const Graph& g, int blob)
{
    return std::find(g.outputs.begin(), g.outputs.end(), blob) != g.outputs.end();
}

void erase_layer(Layer& l)
{
    l.type.clear();
    l.op.reset();
}

// Drops deleted layers and unused blobs, renumbers, re-links.
void compact(Graph& g)
{
    std::vector<Layer> kept;
    for (Layer& l : g.layers)
        if (!l.type.empty()) kept.push_back(std::move(l));
    std::vector<bool> used(g.blobs.size(), false);
    for (const Layer& l : kept) {
        for (int b : l.bottoms) used[b] = true;
        for (int t : l.tops) used[t] = true;
    }
    std::vector<int> remap(g.blobs.size(), -1);
    std::vector<Blob> blobs;
    g.blob_index.clear();
    for (size_t b = 0; b < g.blobs.size(); ++b) {
        if (!used[b]) continue;
        remap[b] = static_cast<int>(blobs.size());
        g.blob_index[g.blobs[b].name] = remap[b];
        blobs.push_back(Blob{g.blobs[b].name, -1, {}});
    }
    for (Layer& l : kept) {
        for (int& b : l.bottoms) b = remap[b];
        for (int& t : l.tops) t = remap[t];
    }
    g.layers = std::move(kept);
    g.blobs = std::move(blobs);
    g.finalize();
}

int sole_consumer(const Graph& g, int li)
{
    const Layer& l = g.layers[li];
    if (l.tops.size() != 1) return -1;
    const Blob& out = g.blobs[l.tops[0]];
    if (out.consumers.size() != 1 || is_graph_output(g, l.tops[0])) return -1;
    return out.consumers[0];
}

namespace {

// Replaces every use of blob `from` by blob `to`.
void rewire(Graph& g, int from, int to)
{
    for (Layer& l : g.layers)
        for (int& b : l.bottoms)
            if (b == from) b = to;
}

// Folding must not blow a model up (ConstantOfShape, Expand, Tile, Range of
// constants): outputs no larger than the inputs, or small.
bool small_enough_to_fold(const std::vector<Tensor>& in, const std::vector<TensorDesc>& out)
{
    constexpr int64_t kSmall = 4096;
    int64_t in_bytes = 0, out_bytes = 0;
    for (const Tensor& t : in) in_bytes += static_cast<int64_t>(t.nbytes());
    for (const TensorDesc& d : out) {
        const int64_t n = shape_numel(d.shape);
        if (n > (int64_t(1) << 40) / 8) return false;
        out_bytes += n * static_cast<int64_t>(dtype_size(d.dtype));
    }
    return out_bytes <= std::max(in_bytes, kSmall * 4);
}

std::vector<Tensor> weight_values(const Layer& l)
{
    std::vector<Tensor> v;
    for (const StoredWeight& w : l.weights) v.push_back(w.value);
    return v;
}

bool is_conv_like(const Layer& l)
{
    return l.type == "Convolution" || l.type == "ConvolutionDepthWise" || l.type == "InnerProduct";
}

} // namespace

void absorb_follower(Graph& g, int li, int follower)
{
    g.layers[li].tops[0] = g.layers[follower].tops[0];
    erase_layer(g.layers[follower]);
    compact(g);
}

void rebuild_layer(Graph& g, int li, const std::vector<Tensor>& weights)
{
    Layer& l = g.layers[li];
    std::unique_ptr<Op> op = create_op(l.type);
    check(op != nullptr, g.where(li), ": unknown layer type");
    op->type = l.type;
    op->name = l.name;
    op->load_param(l.params);
    TensorListReader reader(weights);
    reader.options = g.load_options;
    op->load_model(reader);
    check(reader.unused() == 0, g.where(li), ": rebuilt with unused weights");
    l.weights = reader.recorded;
    l.op = std::move(op);
}

int remove_identity_layers(Graph& g, OptimizeReport& report)
{
    int n = 0;
    for (Layer& l : g.layers) {
        const bool identity = l.type == "Noop" || (l.type == "Dropout" && l.params.get_float(0, 1.f) == 1.f);
        if (!identity || l.bottoms.size() != 1 || l.tops.size() != 1 || is_graph_output(g, l.tops[0])) continue;
        rewire(g, l.tops[0], l.bottoms[0]);
        report.applied.push_back("removed " + l.type + " '" + l.name + "'");
        erase_layer(l);
        ++n;
    }
    if (n) compact(g);
    return n;
}

int remove_dead_layers(Graph& g, OptimizeReport& report)
{
    std::vector<bool> live(g.layers.size(), false);
    std::vector<int> stack;
    for (int b : g.outputs) stack.push_back(g.blobs[b].producer);
    while (!stack.empty()) {
        const int li = stack.back();
        stack.pop_back();
        if (li < 0 || live[li]) continue;
        live[li] = true;
        for (int b : g.layers[li].bottoms) stack.push_back(g.blobs[b].producer);
    }
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        if (live[li] || g.layers[li].type == "Input") continue;
        report.applied.push_back("removed unused " + g.layers[li].type + " '" + g.layers[li].name + "'");
        erase_layer(g.layers[li]);
        ++n;
    }
    if (n) compact(g);
    return n;
}

int fold_constant_layers(Graph& g, OptimizeReport& report)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        Layer& l = g.layers[li];
        // Batched layers run per sample (the runtime splits the batch axis): not here.
        if (l.type == "Constant" || l.type == "Input" || l.bottoms.empty() || l.op->dynamic_output_shape() ||
            l.batched())
            continue;
        std::vector<Tensor> in;
        for (int b : l.bottoms) {
            const int p = g.blobs[b].producer;
            if (p < 0 || g.layers[p].type != "Constant") break;
            in.push_back(g.layers[p].op->constant_value());
        }
        if (in.size() != l.bottoms.size()) continue;
        std::vector<TensorDesc> in_desc, out_desc(l.tops.size());
        for (const Tensor& t : in) in_desc.push_back(TensorDesc(t.shape(), t.dtype(), t));
        std::vector<Tensor> out;
        try {
            l.op->infer(in_desc, out_desc);
            if (!small_enough_to_fold(in, out_desc)) continue;
            for (size_t i = 0; i < out_desc.size(); ++i) {
                const TensorDesc& d = out_desc[i];
                out.push_back(l.op->outputs_alias_input() ? in[l.op->alias_input(static_cast<int>(i))].clone().view_as(d.shape, d.dtype)
                                                          : Tensor(d.shape, d.dtype));
            }
            if (!l.op->outputs_alias_input()) l.op->run(in, out, ExecContext(nullptr, 1));
        } catch (const Error&) {
            continue; // leave it to the runtime, which reports the error with context
        }
        // One Constant layer per output; the original layer goes.
        const std::vector<int> tops = l.tops;
        const std::string name = l.name;
        report.applied.push_back("folded " + l.type + " '" + name + "' into constants");
        erase_layer(l);
        for (size_t i = 0; i < tops.size(); ++i) {
            Layer c;
            c.type = "Constant";
            c.name = name + (i ? "#" + std::to_string(i) : "");
            c.tops = {tops[i]};
            c.params.set_int(0, static_cast<int>(out[i].dtype()));
            std::vector<int> dims(out[i].shape().begin(), out[i].shape().end());
            if (!dims.empty()) c.params.set_ints(1, dims);
            g.layers.push_back(std::move(c));
            rebuild_layer(g, static_cast<int>(g.layers.size()) - 1, {out[i]});
        }
        ++n;
    }
    if (n) {
        // New Constant layers were appended; move them before their consumers.
        std::stable_partition(g.layers.begin(), g.layers.end(), [](const Layer& l) { return l.type == "Constant" || l.type == "Input"; });
        compact(g);
    }
    return n;
}

int fold_batchnorm_into_conv(Graph& g, OptimizeReport& report)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        if (!is_conv_like(g.layers[li]) || g.layers[li].params.get_int(9, 0) != 0) continue;
        if (g.layers[li].params.get_int(8, 0) != 0 || g.layers[li].params.get_int(19, 0) != 0) continue;
        // Weights given as inputs are not ours to edit; a batched InnerProduct gives rows
        // per sample, which a BatchNorm would scale per row, not per output.
        if (g.layers[li].weights.empty() || g.layers[li].bottoms.size() != 1) continue;
        if (g.layers[li].type == "InnerProduct" && g.layers[li].batched()) continue;
        const int bn = sole_consumer(g, static_cast<int>(li));
        if (bn < 0 || g.layers[bn].type != "BatchNorm" || g.layers[bn].weights.size() != 4) continue;
        Layer& conv = g.layers[li];
        const int64_t channels = conv.params.get_int(0, 0);
        const Tensor& w = conv.weights[0].value;
        if (w.dtype() != DType::F32 || w.numel() % channels != 0) continue;
        const float eps = g.layers[bn].params.get_float(1, 0.f);
        const float* slope = g.layers[bn].weights[0].value.data<float>();
        const float* mean = g.layers[bn].weights[1].value.data<float>();
        const float* var = g.layers[bn].weights[2].value.data<float>();
        const float* beta = g.layers[bn].weights[3].value.data<float>();
        if (g.layers[bn].weights[0].value.numel() != channels) continue;
        Tensor new_w = w.clone(), new_b = Tensor::zeros({channels});
        const int64_t per_channel = w.numel() / channels;
        for (int64_t c = 0; c < channels; ++c) {
            float sd = std::sqrt(var[c] + eps);
            if (sd == 0.f) sd = 0.0001f; // as BatchNorm itself does
            const float k = slope[c] / sd;
            for (int64_t i = 0; i < per_channel; ++i) new_w.data<float>()[c * per_channel + i] *= k;
            const float b = conv.params.get_int(conv.type == "InnerProduct" ? 1 : 5, 0) ? conv.weights[1].value.data<float>()[c] : 0.f;
            new_b.data<float>()[c] = (b - mean[c]) * k + beta[c];
        }
        conv.params.set_int(conv.type == "InnerProduct" ? 1 : 5, 1);
        rebuild_layer(g, static_cast<int>(li), {new_w, new_b});
        report.applied.push_back("folded BatchNorm '" + g.layers[bn].name + "' into " + conv.type + " '" + conv.name + "'");
        absorb_follower(g, static_cast<int>(li), bn);
        ++n;
    }
    return n;
}

int fuse_activation_into_conv(Graph& g, OptimizeReport& report)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        if (!is_conv_like(g.layers[li]) || g.layers[li].params.get_int(9, 0) != 0) continue;
        const int act = sole_consumer(g, static_cast<int>(li));
        if (act < 0) continue;
        const Layer& a = g.layers[act];
        int type = -1;
        std::vector<float> args;
        if (a.type == "ReLU") {
            const float slope = a.params.get_float(0, 0.f);
            type = slope == 0.f ? Activation::ReLU : Activation::LeakyReLU;
            if (slope != 0.f) args = {slope};
        } else if (a.type == "Clip") {
            type = Activation::Clip;
            args = {a.params.get_float(0, -FLT_MAX), a.params.get_float(1, FLT_MAX)};
        } else if (a.type == "Mish") {
            type = Activation::Mish;
        } else if (a.type == "HardSwish") {
            type = Activation::HardSwish;
            args = {a.params.get_float(0, 0.2f), a.params.get_float(1, 0.5f)};
        }
        // Sigmoid is not fused: the fused form clamps its input (as ncnn does) and would change results.
        if (type < 0) continue;
        Layer& conv = g.layers[li];
        conv.params.set_int(9, type);
        if (!args.empty()) conv.params.set_floats(10, args);
        rebuild_layer(g, static_cast<int>(li), weight_values(conv));
        report.applied.push_back("fused " + a.type + " '" + a.name + "' into " + conv.type + " '" + conv.name + "'");
        absorb_follower(g, static_cast<int>(li), act);
        ++n;
    }
    return n;
}

OptimizeReport optimize_graph(Graph& g, const ShapeHints& hints)
{
    OptimizeReport report;
    // Outputs found as "produced, never read" would change when a rewrite
    // leaves a layer unread (a fused pattern's constant): pin them first.
    if (g.declared_outputs.empty())
        for (int b : g.outputs) g.declared_outputs.push_back(g.blobs[b].name);
    for (int round = 0; round < 1000; ++round) { // each round folds one more level of constant chains
        int changes = remove_identity_layers(g, report);
        changes += fold_constant_layers(g, report);
        changes += fuse_matmul_into_inner_product(g, hints, report);
        changes += fuse_layer_norm_pattern(g, hints, report);
        changes += fuse_gelu_pattern(g, report);
        changes += fuse_swish_pattern(g, report);
        changes += fuse_hard_swish_pattern(g, report);
        changes += fuse_attention_pattern(g, hints, report);
        changes += fold_batchnorm_into_conv(g, report);
        changes += fuse_activation_into_conv(g, report);
        changes += remove_dead_layers(g, report);
        if (changes == 0) break;
    }
    return report;
}

} // namespace kestrel
