// calibrate(): the float model run over the calibration samples with a
// callback that reads the input of every layer quantize_net can make int8.
#include <cmath>
#include <functional>
#include <map>

#include "graph/graph.h"
#include "kestrel/quantize.h"
#include "quantize/thresholds.h"

namespace kestrel {

namespace {

// Quantizable layers by name -> the blob they read (names several layers
// share are left out: the callback could not tell them apart).
std::map<std::string, int> watched_layers(const Net& net)
{
    const Graph& g = net.graph();
    std::map<std::string, int> count;
    for (const Layer& l : g.layers) ++count[l.name];
    std::map<std::string, int> watched;
    for (size_t li = 0; li < g.layers.size(); ++li)
        if (quantizable_layer(net, static_cast<int>(li)) && count[g.layers[li].name] == 1)
            watched[g.layers[li].name] = g.layers[li].bottoms[0];
    return watched;
}

// Runs every sample, calling `see` with each watched layer's float input.
void observe(const Net& net, const std::vector<CalibrationSample>& samples, const CalibrationOptions& options,
             const std::map<std::string, int>& watched, const std::function<void(int, const Tensor&)>& see)
{
    Options o;
    o.threads = options.threads;
    Session session(net, o);
    session.set_callbacks(
        [&](const OpEvent& e) {
            const auto it = watched.find(e.layer_name);
            if (it != watched.end() && !e.inputs.empty() && e.inputs[0].dtype() == DType::F32)
                see(it->second, e.inputs[0]);
        },
        nullptr);
    for (size_t i = 0; i < samples.size(); ++i) {
        try {
            for (const auto& input : samples[i]) session.set_input(input.first, input.second);
            session.run(net.output_names());
        } catch (const Error& e) {
            fail("calibration sample ", i + 1, " of ", samples.size(), ": ", e.what());
        }
    }
}

float max_abs(const Tensor& t)
{
    const float* v = t.data<float>();
    float m = 0;
    for (int64_t i = 0; i < t.numel(); ++i)
        if (std::isfinite(v[i])) m = std::max(m, std::fabs(v[i]));
    return m;
}

} // namespace

std::map<std::string, float> calibrate(const Net& net, const std::vector<CalibrationSample>& samples,
                                       const CalibrationOptions& options)
{
    check(!samples.empty(), "calibrate: no calibration samples");
    const std::map<std::string, int> watched = watched_layers(net);
    std::map<int, float> absmax;
    observe(net, samples, options, watched,
            [&](int blob, const Tensor& x) { absmax[blob] = std::max(absmax[blob], max_abs(x)); });

    std::map<int, float> threshold = absmax;
    if (options.method != CalibrationMethod::MinMax) {
        std::map<int, AbsHistogram> histograms;
        for (const auto& b : absmax) histograms.emplace(b.first, AbsHistogram(b.second));
        observe(net, samples, options, watched,
                [&](int blob, const Tensor& x) { histograms.at(blob).add(x.data<float>(), x.numel()); });
        for (const auto& h : histograms)
            threshold[h.first] = options.method == CalibrationMethod::KL
                                     ? kl_threshold(h.second)
                                     : percentile_threshold(h.second, options.percentile);
    }
    std::map<std::string, float> scales;
    for (const auto& t : threshold)
        scales[net.graph().blobs[static_cast<size_t>(t.first)].name] = t.second > 0 ? 127.f / t.second : 1.f;
    return scales;
}

} // namespace kestrel
