#include "graph/optimize.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <set>

#include "graph/weight_lists.h"
#include "graph/layer_traits.h"
#include "graph/pattern_match.h"
#include "kestrel/op.h"

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

bool is_conv_like(const Layer& l) { return layer_traits(l.type).bias_param >= 0; }

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

bool evaluate_on_constants(const Op& op, const std::vector<Tensor>& in, size_t output_count, std::vector<Tensor>& out)
{
    if (op.dynamic_output_shape()) return false;
    std::vector<TensorDesc> in_desc, out_desc(output_count);
    for (const Tensor& t : in) in_desc.push_back(TensorDesc(t.shape(), t.dtype(), t));
    out.clear();
    try {
        op.infer(in_desc, out_desc);
        if (!small_enough_to_fold(in, out_desc)) return false;
        // A sequence or an optional is no weight a Constant layer could hold (strings are left as they come).
        if (std::any_of(out_desc.begin(), out_desc.end(), [](const TensorDesc& d) { return dtype_holds_objects(d.dtype); }))
            return false;
        for (size_t i = 0; i < out_desc.size(); ++i) {
            const TensorDesc& d = out_desc[i];
            out.push_back(op.outputs_alias_input() ? in[op.alias_input(static_cast<int>(i))].clone().view_as(d.shape, d.dtype)
                                                   : Tensor(d.shape, d.dtype));
        }
        if (!op.outputs_alias_input()) op.run(in, out, ExecContext(nullptr, 1));
    } catch (const Error&) {
        return false; // left to the runtime, which reports the error with context
    }
    return true;
}

int fold_constant_layers(Graph& g, OptimizeReport& report)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        Layer& l = g.layers[li];
        // Batched layers run per sample (the runtime splits the batch axis): not here.
        if (l.type == "Constant" || l.type == "Input" || l.bottoms.empty() || l.batched())
            continue;
        std::vector<Tensor> in;
        for (int b : l.bottoms) {
            const int p = g.blobs[b].producer;
            if (p < 0 || g.layers[p].type != "Constant") break;
            in.push_back(g.layers[p].op->constant_value());
        }
        if (in.size() != l.bottoms.size()) continue;
        std::vector<Tensor> out;
        if (!evaluate_on_constants(*l.op, in, l.tops.size(), out)) continue;
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

namespace {

// The convolution-like layer li, with weights of its own and no activation,
// whose output only `follower` reads (-1 when not so).
int foldable_follower(const Graph& g, size_t li)
{
    const Layer& l = g.layers[li];
    if (!is_conv_like(l) || l.params.get_int(9, 0) != 0) return -1;
    if (l.params.get_int(8, 0) != 0 || l.params.get_int(19, 0) != 0) return -1;
    // Weights given as inputs are not ours to edit; a batched InnerProduct gives rows
    // per sample, which a per-channel affine would scale per row, not per output.
    if (l.weights.empty() || l.bottoms.size() != 1) return -1;
    if (l.type == "InnerProduct" && l.batched()) return -1;
    const int64_t channels = l.params.get_int(0, 0);
    const Tensor& w = l.weights[0].value;
    if (channels <= 0 || w.dtype() != DType::F32 || w.numel() % channels != 0) return -1;
    return sole_consumer(g, static_cast<int>(li));
}

// y = k(c) * conv(x) + ... folded into the conv: weights of channel c times
// k(c), bias(c, b) the new bias from the old one b; the follower is removed.
void fold_affine(Graph& g, int li, int follower, const std::function<float(int64_t)>& k,
                 const std::function<float(int64_t, float)>& bias, OptimizeReport& report)
{
    Layer& conv = g.layers[li];
    const int64_t channels = conv.params.get_int(0, 0);
    const int bias_term = layer_traits(conv.type).bias_param;
    const Tensor& w = conv.weights[0].value;
    Tensor new_w = w.clone(), new_b = Tensor::zeros({channels});
    const int64_t per_channel = w.numel() / channels;
    for (int64_t c = 0; c < channels; ++c) {
        const float kc = k(c);
        for (int64_t i = 0; i < per_channel; ++i) new_w.data<float>()[c * per_channel + i] *= kc;
        new_b.data<float>()[c] = bias(c, conv.params.get_int(bias_term, 0) ? conv.weights[1].value.data<float>()[c] : 0.f);
    }
    conv.params.set_int(bias_term, 1);
    rebuild_layer(g, li, {new_w, new_b});
    report.applied.push_back("folded " + g.layers[follower].type + " '" + g.layers[follower].name + "' into " +
                             conv.type + " '" + conv.name + "'");
    absorb_follower(g, li, follower);
}

// BinaryOp x op scalar, x the conv's output: Mul, Add or Sub (ncnn op types 2, 0, 1).
bool scalar_affine(const Layer& l, int& op, float& c)
{
    if (l.type != "BinaryOp" || l.params.get_int(1, 0) != 1 || l.bottoms.size() != 1) return false;
    op = l.params.get_int(0, 0);
    c = l.params.get_float(2, 0.f);
    return op == 0 || op == 1 || op == 2;
}

} // namespace

// BatchNorm, and a Mul/Add/Sub by a scalar (PaddleOCR's learnable affine
// blocks), after a convolution: folded into its weights and bias.
int fold_affine_into_conv(Graph& g, OptimizeReport& report)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        const int f = foldable_follower(g, li);
        if (f < 0) continue;
        const Layer& next = g.layers[f];
        const int64_t channels = g.layers[li].params.get_int(0, 0);
        int op = 0;
        float c = 0.f;
        if (next.type == "BatchNorm" && next.weights.size() == 4 && next.weights[0].value.numel() == channels) {
            const float eps = next.params.get_float(1, 0.f);
            const float* slope = next.weights[0].value.data<float>();
            const float* mean = next.weights[1].value.data<float>();
            const float* var = next.weights[2].value.data<float>();
            const float* beta = next.weights[3].value.data<float>();
            const auto k = [&](int64_t ch) {
                float sd = std::sqrt(var[ch] + eps);
                if (sd == 0.f) sd = 0.0001f; // as BatchNorm itself does
                return slope[ch] / sd;
            };
            fold_affine(g, static_cast<int>(li), f, k, [&](int64_t ch, float b) { return (b - mean[ch]) * k(ch) + beta[ch]; },
                        report);
        } else if (scalar_affine(next, op, c)) {
            fold_affine(g, static_cast<int>(li), f, [&](int64_t) { return op == 2 ? c : 1.f; },
                        [&](int64_t, float b) { return op == 2 ? b * c : op == 0 ? b + c : b - c; }, report);
        } else {
            continue;
        }
        ++n;
    }
    return n;
}

namespace {

// Layer `a` as a fused activation of `conv` (ncnn's activation_type and params), or false.
bool as_fused_activation(const Layer& conv, const Layer& a, int& type, std::vector<float>& args)
{
    const LayerTraits& t = layer_traits(a.type);
    if (!t.as_fused_activation || (t.fused_needs_vector_exp && !layer_traits(conv.type).activations_by_vector_exp))
        return false;
    return t.as_fused_activation(a.params, type, args);
}

} // namespace

int fuse_activation_into_conv(Graph& g, OptimizeReport& report, bool with_ops)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        if (!is_conv_like(g.layers[li]) || g.layers[li].params.get_int(9, 0) != 0) continue;
        const int act = sole_consumer(g, static_cast<int>(li));
        if (act < 0) continue;
        const Layer& a = g.layers[act];
        int type = 0;
        std::vector<float> args;
        if (!as_fused_activation(g.layers[li], a, type, args)) continue;
        Layer& conv = g.layers[li];
        conv.params.set_int(9, type);
        if (!args.empty()) conv.params.set_floats(10, args);
        if (with_ops) rebuild_layer(g, static_cast<int>(li), conv.weight_values());
        report.applied.push_back("fused " + a.type + " '" + a.name + "' into " + conv.type + " '" + conv.name + "'");
        absorb_follower(g, static_cast<int>(li), act);
        ++n;
    }
    return n;
}

namespace {

// ncnn's params for a convolution's pads: left, right, top, bottom.
constexpr int kConvPadIds[4] = {4, 15, 14, 16};

// A convolution's explicit pads (left, right, top, bottom; right and top
// default to left, bottom to top), or false for its automatic (SAME) pads.
bool explicit_conv_pads(const ParamDict& pd, int (&pads)[4])
{
    pads[0] = pd.get_int(kConvPadIds[0], 0);
    pads[1] = pd.get_int(kConvPadIds[1], pads[0]);
    pads[2] = pd.get_int(kConvPadIds[2], pads[0]);
    pads[3] = pd.get_int(kConvPadIds[3], pads[2]);
    return std::all_of(pads, pads + 4, [](int p) { return p >= 0; });
}

// ONNX's form (21=1) of the same: a rank-4 value whose constant pads leave
// the batch and channel axes alone (TFLite's PAD before a convolution).
bool onnx_rows_and_columns_padding(const Graph& g, const Layer& pad, int (&pads)[4], float& value)
{
    if (pad.bottoms.size() < 2 || pad.params.get_int(20, 0) != 0) return false;
    const Tensor* given = constant_of(g, pad.bottoms[1]);
    if (!given || given->numel() != 8 || dtype_is_float(given->dtype())) return false;
    const Tensor p = given->to(DType::I64); // begins of N, C, H, W, then their ends
    const int64_t* q = p.data<int64_t>();
    if (q[0] != 0 || q[1] != 0 || q[4] != 0 || q[5] != 0) return false;
    for (int k : {2, 3, 6, 7})
        if (q[k] < 0 || q[k] > INT32_MAX) return false;
    pads[0] = static_cast<int>(q[3]), pads[1] = static_cast<int>(q[7]);
    pads[2] = static_cast<int>(q[2]), pads[3] = static_cast<int>(q[6]);
    value = 0.f;
    if (pad.bottoms.size() > 2) {
        const Tensor* v = constant_of(g, pad.bottoms[2]);
        if (!v || v->numel() != 1) return false;
        value = v->to(DType::F32).data<float>()[0];
    }
    return true;
}

// Layer `pad` as a constant padding of rows and columns only (ncnn's params:
// 0=top 1=bottom 2=left 3=right, 5=value; or ONNX's form), its pads as left,
// right, top, bottom.
bool rows_and_columns_padding(const Graph& g, const Layer& pad, int (&pads)[4], float& value)
{
    const ParamDict& pd = pad.params;
    if (pad.type != "Padding" || pd.get_int(4, 0) != 0) return false;
    if (pd.get_int(21, 0) == 1) return onnx_rows_and_columns_padding(g, pad, pads, value);
    if (pd.get_int(21, 0) != 0 || pd.get_int(6, 0) != 0 || pd.get_int(7, 0) != 0 || pd.get_int(8, 0) != 0)
        return false;
    pads[0] = pd.get_int(2, 0), pads[1] = pd.get_int(3, 0), pads[2] = pd.get_int(0, 0), pads[3] = pd.get_int(1, 0);
    value = pd.get_float(5, 0.f);
    return std::all_of(pads, pads + 4, [](int p) { return p >= 0; });
}

} // namespace

int fuse_padding_into_conv(Graph& g, OptimizeReport& report, bool with_ops)
{
    int n = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        int extra[4], own[4];
        float value = 0.f;
        if (!rows_and_columns_padding(g, g.layers[li], extra, value)) continue;
        const int ci = sole_consumer(g, static_cast<int>(li));
        if (ci < 0) continue;
        Layer& conv = g.layers[ci];
        // Float convolutions only (int8 ones pad with the quantized value).
        if (layer_traits(conv.type).residual_param < 0 || conv.bottoms.empty() ||
            conv.bottoms[0] != g.layers[li].tops[0] || conv.params.get_int(8, 0) != 0 ||
            !explicit_conv_pads(conv.params, own))
            continue;
        const bool own_pads = std::any_of(own, own + 4, [](int p) { return p > 0; });
        if (own_pads && conv.params.get_float(18, 0.f) != value) continue; // two pad values
        for (int i = 0; i < 4; ++i) conv.params.set_int(kConvPadIds[i], own[i] + extra[i]);
        conv.params.set_float(18, value);
        conv.bottoms[0] = g.layers[li].bottoms[0];
        if (with_ops) rebuild_layer(g, ci, conv.weight_values());
        report.applied.push_back("fused Padding '" + g.layers[li].name + "' into " + conv.type + " '" + conv.name + "'");
        erase_layer(g.layers[li]);
        compact(g);
        ++n;
    }
    return n;
}

namespace {

// Layer `sum` as the sum of exactly two inputs of one shape: ncnn's Eltwise
// SUM (coefficients, if any, all 1), or an Add (BinaryOp 0) of two blobs
// whose shapes `hints` prove equal (no broadcast).
bool plain_sum_of_two(const Graph& g, const Layer& sum, const ShapeHints* hints)
{
    if (sum.bottoms.size() != 2 || sum.tops.size() != 1) return false;
    if (sum.type == "Eltwise") {
        const std::vector<float> coeffs = sum.params.get_floats(1);
        return sum.params.get_int(21, 0) == 0 && sum.params.get_int(0, 0) == 1 &&
               std::all_of(coeffs.begin(), coeffs.end(), [](float c) { return c == 1.f; });
    }
    if (sum.type != "BinaryOp" || !hints || sum.params.get_int(0, 0) != 0 || sum.params.get_int(1, 0) != 0)
        return false;
    const auto shape = [&](int b) {
        const auto it = hints->find(g.blobs[b].name);
        return it == hints->end() ? Shape{} : it->second;
    };
    const Shape a = shape(sum.bottoms[0]);
    return !a.empty() && a == shape(sum.bottoms[1]) &&
           std::all_of(a.begin(), a.end(), [](int64_t d) { return d >= 0; });
}

// The 2-D convolution with a float output (float, or int8 dequantized) and
// no activation of its own that produced blob b for nothing but layer
// `reader`, or -1.
int plain_conv_producing(const Graph& g, int b, int reader)
{
    const int li = g.blobs[b].producer;
    if (li < 0 || sole_consumer(g, li) != reader) return -1;
    const ParamDict& pd = g.layers[li].params;
    const int residual = layer_traits(g.layers[li].type).residual_param;
    return residual >= 0 && pd.get_int(8, 0) < 100 && pd.get_int(19, 0) == 0 && pd.get_int(9, 0) == 0 &&
                   pd.get_int(residual, 0) == 0
               ? li
               : -1;
}

} // namespace

int fuse_residual_into_conv(Graph& g, OptimizeReport& report, bool with_ops, const ShapeHints* hints)
{
    int n = 0;
    for (size_t si = 0; si < g.layers.size(); ++si) {
        const int sum = static_cast<int>(si);
        if (!plain_sum_of_two(g, g.layers[si], hints)) continue;
        // The later of the two convolutions (if both are), so that the other
        // operand is ready when it runs.
        int conv = -1, other = -1;
        for (int k = 0; k < 2; ++k) {
            const int c = plain_conv_producing(g, g.layers[si].bottoms[k], sum);
            if (c > conv) conv = c, other = g.layers[si].bottoms[1 - k];
        }
        if (conv < 0 || g.blobs[other].producer >= conv) continue;
        Layer& c = g.layers[conv];
        c.bottoms.push_back(other);
        c.params.set_int(layer_traits(c.type).residual_param, 1);
        if (with_ops) rebuild_layer(g, conv, c.weight_values());
        report.applied.push_back("fused " + g.layers[si].type + " '" + g.layers[si].name + "' into " + c.type + " '" +
                                 c.name + "' as its residual");
        absorb_follower(g, conv, sum);
        --si; // the layer after the sum is at its index now
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
        changes += fold_affine_into_conv(g, report);
        if (g.load_options.fuse_residuals) changes += fuse_residual_into_conv(g, report, true, &hints);
        changes += fuse_activation_into_conv(g, report);
        changes += fuse_padding_into_conv(g, report);
        changes += remove_dead_layers(g, report);
        if (changes == 0) break;
    }
    return report;
}

} // namespace kestrel
