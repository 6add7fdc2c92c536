// kestrel info MODEL [--weights FILE] [--shape NAME=d0,d1,...]...
// Every layer with its type, params, inferred shapes, weight bytes and MACs; totals; peak memory.
#include <cstdio>

#include "cli.h"
#include "graph/graph.h"
#include "runtime/analysis.h"

namespace kestrel::cli {

namespace {

std::string descs_str(const std::vector<TensorDesc>& ds)
{
    std::string s;
    for (const auto& d : ds) s += (s.empty() ? "" : " ") + shape_str(d.shape);
    return s.empty() ? "-" : s;
}

std::string human(double v, const char* unit)
{
    char buf[64];
    if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.3f G%s", v / 1e9, unit);
    else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.3f M%s", v / 1e6, unit);
    else if (v >= 1e3) std::snprintf(buf, sizeof buf, "%.3f K%s", v / 1e3, unit);
    else std::snprintf(buf, sizeof buf, "%.0f %s", v, unit);
    return buf;
}

} // namespace

int info_command(const std::vector<std::string>& argv)
{
    const Args args = parse_args(argv, {"--weights", "--shape"});
    if (args.positional.size() != 1) throw UsageError("info needs exactly one MODEL argument");
    LoadedModel model;
    load_model(model, args.positional[0], args.last("--weights"), true);
    std::map<std::string, TensorDesc> inputs;
    if (args.options.count("--shape"))
        for (const auto& s : args.options.at("--shape")) {
            const auto kv = split_assignment(s, "--shape");
            inputs[kv.first] = TensorDesc{parse_dims(kv.second), DType::F32};
        }
    for (const auto& name : model.net.input_names()) {
        if (inputs.count(name)) continue;
        const Shape declared = model.net.input_shape(name);
        if (declared.empty() && !model.net.graph().layers.empty() &&
            !model.net.graph().layers[model.net.graph().blobs[model.net.graph().find_blob(name)].producer].params.has(20))
            fail(model.param_path, ": input '", name, "' declares no shape; pass --shape ", name, "=C,H,W");
        inputs[name] = TensorDesc(concrete_shape(declared), model.net.input_dtype(name));
    }
    const ModelReport report = analyze_model(model.net, inputs);
    const Graph& g = model.net.graph();
    std::printf("model: %s\nweights: %s\n", model.param_path.c_str(),
                model.weights_path.empty() ? "(none: zero-filled)" : model.weights_path.c_str());
    for (const auto& kv : inputs) std::printf("input %s %s\n", kv.first.c_str(), shape_str(kv.second.shape).c_str());
    std::printf("%-4s %-22s %-36s %-28s %-28s %12s %14s  %s\n", "#", "type", "name", "input shapes", "output shapes",
                "weights", "MACs", "params");
    for (const LayerReport& r : report.layers) {
        const Layer& l = g.layers[r.layer];
        std::printf("%-4d %-22s %-36s %-28s %-28s %12lld %14lld  %s\n", r.layer, l.type.c_str(), l.name.c_str(),
                    descs_str(r.inputs).c_str(), descs_str(r.outputs).c_str(), static_cast<long long>(r.weight_bytes),
                    static_cast<long long>(r.macs), l.params.to_text().c_str());
    }
    std::printf("layers: %zu (%zu run for the outputs)\n", g.layers.size(), report.layers.size());
    std::printf("total MACs: %s (%lld)\n", human(static_cast<double>(report.total_macs), "MAC").c_str(),
                static_cast<long long>(report.total_macs));
    std::printf("total weights: %s\n", human(static_cast<double>(report.total_weight_bytes), "B").c_str());
    std::printf("peak activation memory (plan): %s\n", human(static_cast<double>(report.peak_bytes), "B").c_str());
    return 0;
}

} // namespace kestrel::cli
