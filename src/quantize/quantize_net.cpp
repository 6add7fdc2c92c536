// quantize_net(): the graph copied layer by layer into a new Net, the
// quantizable layers with int8 weights and ncnn's int8 scales (ncnn2int8).
#include <cmath>

#include "graph/graph.h"
#include "graph/optimize.h"
#include "kestrel/quantize.h"
#include "ops/conv/conv_params.h"
#include "ops/quant/int8.h"

namespace kestrel {

namespace {

bool is_depthwise(const Layer& l) { return l.type == "ConvolutionDepthWise"; }

bool is_conv(const Layer& l) { return l.type == "Convolution" || l.type == "ConvolutionDepthWise"; }

// The scales of weights in `chunks` equal runs (output channels or groups):
// 127 / each run's largest |w| (1 for an all-zero run).
std::vector<float> chunk_scales(const Tensor& weight, int64_t chunks)
{
    const int64_t per_chunk = weight.numel() / chunks;
    std::vector<float> scales(static_cast<size_t>(chunks));
    for (int64_t c = 0; c < chunks; ++c) {
        const float* w = weight.data<float>() + c * per_chunk;
        float absmax = 0;
        for (int64_t i = 0; i < per_chunk; ++i) absmax = std::max(absmax, std::fabs(w[i]));
        scales[static_cast<size_t>(c)] = absmax > 0 && std::isfinite(absmax) ? 127.f / absmax : 1.f;
    }
    return scales;
}

Tensor values(const std::vector<float>& v)
{
    Tensor t({static_cast<int64_t>(v.size())}, DType::F32);
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
}

// The layer's params and weights made int8 with input scale `input_scale`
// (ncnn's weight order: weight, bias, weight scales, bottom scale, and the
// top scale when `output_scale` is set: the output requantized to int8).
void make_int8(const Layer& l, float input_scale, const float* output_scale, ParamDict& params,
               std::vector<Tensor>& weights)
{
    const int64_t chunks = is_depthwise(l) ? l.params.get_int(7, 1) : l.params.get_int(0, 0);
    check(chunks > 0 && weights[0].numel() % chunks == 0, "quantize: ", l.type, " '", l.name,
          "': weights do not split into ", chunks, " channels");
    const std::vector<float> scales = chunk_scales(weights[0], chunks);
    weights[0] = int8_weights(weights[0], scales); // rounded as a layer rounds float weights at load
    weights.push_back(values(scales));
    weights.push_back(values({input_scale}));
    params.set_int(8, (is_depthwise(l) ? 1 : 2) + (output_scale ? 100 : 0));
    if (output_scale) weights.push_back(values({*output_scale}));
}

// The input scale of the int8 convolution that alone reads what convolution
// `li` writes (ncnn2int8's fuse_requantize: `li` then writes int8 for it),
// or null.
const float* next_conv_scale(const Net& net, int li, const std::map<std::string, float>& input_scales)
{
    const Graph& g = net.graph();
    const Layer& l = g.layers[static_cast<size_t>(li)];
    if (!is_conv(l) || l.tops.size() != 1) return nullptr;
    const Blob& top = g.blobs[static_cast<size_t>(l.tops[0])];
    if (top.consumers.size() != 1 || is_graph_output(g, l.tops[0])) return nullptr;
    const int next = top.consumers[0];
    const Layer& n = g.layers[static_cast<size_t>(next)];
    if (!is_conv(n) || n.bottoms.size() != 1 || !quantizable_layer(net, next)) return nullptr;
    const auto scale = input_scales.find(top.name);
    return scale == input_scales.end() ? nullptr : &scale->second;
}

} // namespace

bool quantizable_layer(const Net& net, int layer)
{
    const Layer& l = net.graph().layers.at(static_cast<size_t>(layer));
    const bool conv = is_conv(l);
    if (!conv && l.type != "InnerProduct") return false;
    if (l.params.get_int(8, 0) != 0 || l.bottoms.empty() || l.weights.empty()) return false;
    if (conv && (l.params.get_int(19, 0) != 0 || l.params.get_int(kResidualParam, 0) != 0)) return false;
    return l.weights[0].value.dtype() == DType::F32;
}

int quantize_net(const Net& net, const std::map<std::string, float>& input_scales, Net& out, bool requantize)
{
    const Graph& g = net.graph();
    Net fresh;
    LoadOptions lo = net.load_options();
    lo.keep_loaded_weights = true;
    fresh.set_load_options(lo);
    int quantized = 0;
    for (size_t li = 0; li < g.layers.size(); ++li) {
        const Layer& l = g.layers[li];
        std::vector<std::string> bottoms, tops;
        for (int b : l.bottoms) bottoms.push_back(g.blobs[static_cast<size_t>(b)].name);
        for (int t : l.tops) tops.push_back(g.blobs[static_cast<size_t>(t)].name);
        ParamDict params = l.params;
        std::vector<Tensor> weights = l.weight_values();
        const auto scale = bottoms.empty() ? input_scales.end() : input_scales.find(bottoms[0]);
        if (scale != input_scales.end() && quantizable_layer(net, static_cast<int>(li))) {
            const float* output_scale = requantize ? next_conv_scale(net, static_cast<int>(li), input_scales) : nullptr;
            make_int8(l, scale->second, output_scale, params, weights);
            ++quantized;
        }
        fresh.add_layer(l.type, l.name, bottoms, tops, params, weights);
    }
    if (!g.declared_outputs.empty()) fresh.set_output_names(g.declared_outputs);
    else fresh.finish_graph();
    out = std::move(fresh);
    return quantized;
}

} // namespace kestrel
