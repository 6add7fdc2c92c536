// kestrel info MODEL [--weights FILE] [--shape NAME=d0,d1,...]... [--json | --dot | --plan]
// Every layer with its type, params, inferred shapes, weight bytes and MACs;
// totals; peak memory. Without a shape for an input that declares none, the
// table still lists every layer and the weights, with shapes and MACs unknown.
// --json prints the same as one JSON document (with --plan, each layer's
// plan too); --dot the graph for Graphviz; --plan the session's plan: per
// step where it runs, its blobs' layouts, precision and arena offsets.
#include <cstdio>

#include "cli.h"
#include "graph/graph.h"
#include "runtime/analysis.h"

namespace kestrel::cli {

namespace {

// Shapes, a blob the plan keeps in channel blocks marked with its block
// (":16c", as oneDNN's nChw16c).
std::string descs_str(const std::vector<TensorDesc>& ds)
{
    std::string s;
    for (const auto& d : ds) {
        s += (s.empty() ? "" : " ") + shape_str(d.shape);
        if (d.layout == Layout::ChannelBlocks) s += ":" + std::to_string(channel_block()) + "c";
        // The type a layer computes in: float32 unless said (a float16 model's
        // layers compute in float32 between its float16 inputs and outputs).
        if (d.dtype != DType::F32) s += std::string(":") + dtype_name(d.dtype);
    }
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

// What info knows of a model: the analysis when every input shape is known;
// otherwise each layer with its weights only (shapes_known false).
struct Info {
    std::map<std::string, TensorDesc> inputs;
    std::vector<std::string> unknown_inputs; // declare no shape and got no --shape
    ModelReport report;
    bool shapes_known = true;
    bool backend = false; // --backend other than cpu: say where each layer runs
};

Info gather(const LoadedModel& model, const Args& args)
{
    Info info;
    if (args.options.count("--shape"))
        for (const auto& s : args.options.at("--shape")) {
            const auto kv =
                split_assignment(s, "--shape", [&](const std::string& name) { return is_input_of(model.net, name); });
            info.inputs[kv.first] = TensorDesc{parse_dims(kv.second), DType::F32};
        }
    const Graph& g = model.net.graph();
    for (const auto& name : model.net.input_names()) {
        if (info.inputs.count(name)) continue;
        const Shape declared = model.net.input_shape(name);
        if (declared.empty() && !g.layers[g.blobs[g.find_blob(name)].producer].params.has(20)) {
            info.unknown_inputs.push_back(name);
            continue;
        }
        info.inputs[name] = TensorDesc(concrete_shape(declared), model.net.input_dtype(name));
    }
    info.shapes_known = info.unknown_inputs.empty();
    if (info.shapes_known) {
        Options options;
        args.backend_options(options);
        info.report = analyze_model(model.net, info.inputs, options);
        info.backend = options.backend != Options::Backend::CPU;
        return info;
    }
    for (int li = 0; li < static_cast<int>(g.layers.size()); ++li) {
        LayerReport r;
        r.layer = li;
        r.weight_bytes = g.layers[li].op->weight_bytes();
        info.report.total_weight_bytes += r.weight_bytes;
        info.report.layers.push_back(r);
    }
    return info;
}

void print_table(const LoadedModel& model, const Info& info)
{
    const Graph& g = model.net.graph();
    std::printf("model: %s\nweights: %s\n", model.param_path.c_str(),
                model.weights_path.empty() ? "(none: zero-filled)" : model.weights_path.c_str());
    for (const auto& kv : info.inputs) std::printf("input %s %s\n", kv.first.c_str(), shape_str(kv.second.shape).c_str());
    for (const auto& name : info.unknown_inputs)
        std::printf("input %s ? (declares no shape; pass --shape %s=D0,D1,...)\n", name.c_str(), name.c_str());
    std::printf("%-4s %-22s %-36s %-28s %-28s %12s %14s  %s\n", "#", "type", "name", "input shapes", "output shapes",
                "weights", "MACs", "params");
    for (const LayerReport& r : info.report.layers) {
        const Layer& l = g.layers[r.layer];
        const std::string macs = info.shapes_known ? std::to_string(r.macs) : "?";
        std::printf("%-4d %-22s %-36s %-28s %-28s %12lld %14s  %s\n", r.layer, l.type.c_str(), l.name.c_str(),
                    info.shapes_known ? descs_str(r.inputs).c_str() : "?",
                    info.shapes_known ? descs_str(r.outputs).c_str() : "?", static_cast<long long>(r.weight_bytes),
                    macs.c_str(), l.params.to_text().c_str());
        if (info.backend) std::printf("     runs on: %s\n", r.device.empty() ? "(evaluated while planning)" : r.device.c_str());
    }
    if (info.backend) {
        std::map<std::string, int> per_device;
        for (const LayerReport& r : info.report.layers)
            if (!r.device.empty()) ++per_device[r.device];
        for (const auto& kv : per_device)
            if (kv.first == "view")
                std::printf("layers that are views (no work): %d\n", kv.second);
            else
                std::printf("layers on %s: %d%s\n", kv.first.c_str(), kv.second, kv.first == "cpu" ? " (CPU fallback)" : "");
    }
    std::printf("layers: %zu (%zu run for the outputs)\n", g.layers.size(), info.report.layers.size());
    if (info.shapes_known)
        std::printf("total MACs: %s (%lld)\n", human(static_cast<double>(info.report.total_macs), "MAC").c_str(),
                    static_cast<long long>(info.report.total_macs));
    else
        std::printf("total MACs: unknown (input shapes unknown)\n");
    std::printf("total weights: %s\n", human(static_cast<double>(info.report.total_weight_bytes), "B").c_str());
    if (info.shapes_known)
        std::printf("peak activation memory (plan): %s\n", human(static_cast<double>(info.report.peak_bytes), "B").c_str());
    else
        std::printf("peak activation memory (plan): unknown (input shapes unknown)\n");
}

std::string json_descs(const std::vector<TensorDesc>& ds)
{
    std::string s = "[";
    for (size_t i = 0; i < ds.size(); ++i) s += (i ? "," : "") + json_shape(ds[i].shape);
    return s + "]";
}

std::string json_dtypes(const std::vector<TensorDesc>& ds)
{
    std::string s = "[";
    for (size_t i = 0; i < ds.size(); ++i) s += (i ? "," : "") + json_string(dtype_name(ds[i].dtype));
    return s + "]";
}

std::string json_places(const Graph& g, const std::vector<TensorDesc>& ds, const std::vector<BlobPlacement>& ps)
{
    std::string s = "[";
    for (size_t i = 0; i < ps.size(); ++i) {
        const TensorDesc& d = ds[i];
        s += std::string(i ? "," : "") + "{\"blob\": " + json_string(g.blobs[static_cast<size_t>(ps[i].blob)].name) +
             ", \"layout\": " + json_string(d.layout == Layout::ChannelBlocks ? std::to_string(channel_block()) + "c" : "plain") +
             ", \"dtype\": " + json_string(d.int8_scale != 0.f ? "int8" : dtype_name(d.dtype)) +
             ", \"home\": " + json_string(ps[i].home) + ", \"offset\": " +
             (ps[i].offset >= 0 ? std::to_string(ps[i].offset) : "null") + ", \"bytes\": " + std::to_string(ps[i].bytes) +
             (ps[i].of >= 0 ? ", \"view_of\": " + json_string(g.blobs[static_cast<size_t>(ps[i].of)].name) : "") + "}";
    }
    return s + "]";
}

void print_json(const LoadedModel& model, const Info& info, bool with_plan)
{
    const Graph& g = model.net.graph();
    std::printf("{\"model\": %s, \"weights\": %s, \"inputs\": {", json_string(model.param_path).c_str(),
                model.weights_path.empty() ? "null" : json_string(model.weights_path).c_str());
    size_t k = 0;
    for (const auto& kv : info.inputs)
        std::printf("%s%s: %s", k++ ? ", " : "", json_string(kv.first).c_str(), json_shape(kv.second.shape).c_str());
    for (const auto& name : info.unknown_inputs) std::printf("%s%s: null", k++ ? ", " : "", json_string(name).c_str());
    std::printf("},\n \"layers\": [");
    for (size_t i = 0; i < info.report.layers.size(); ++i) {
        const LayerReport& r = info.report.layers[i];
        const Layer& l = g.layers[r.layer];
        std::printf("%s\n  {\"index\": %d, \"type\": %s, \"name\": %s, \"inputs\": %s, \"outputs\": %s, "
                    "\"output_dtypes\": %s, \"weight_bytes\": %lld, \"macs\": %s, \"params\": %s",
                    i ? "," : "", r.layer, json_string(l.type).c_str(), json_string(l.name).c_str(),
                    info.shapes_known ? json_descs(r.inputs).c_str() : "null",
                    info.shapes_known ? json_descs(r.outputs).c_str() : "null",
                    info.shapes_known ? json_dtypes(r.outputs).c_str() : "null", static_cast<long long>(r.weight_bytes),
                    info.shapes_known ? std::to_string(r.macs).c_str() : "null",
                    json_string(l.params.to_text()).c_str());
        if (with_plan && r.planned_step) {
            std::printf(",\n   \"plan\": {\"device\": %s, \"in_place\": %s, \"scratch_offset\": %s, "
                        "\"scratch_bytes\": %lld, \"inputs\": %s, \"outputs\": %s}",
                        json_string(r.device).c_str(), r.in_place ? "true" : "false",
                        r.scratch_offset >= 0 ? std::to_string(r.scratch_offset).c_str() : "null",
                        static_cast<long long>(r.scratch_bytes), json_places(g, r.inputs, r.input_places).c_str(),
                        json_places(g, r.outputs, r.output_places).c_str());
        }
        std::printf("}");
    }
    std::printf("],\n \"total_macs\": %s, \"total_weight_bytes\": %lld, \"peak_bytes\": %s}\n",
                info.shapes_known ? std::to_string(info.report.total_macs).c_str() : "null",
                static_cast<long long>(info.report.total_weight_bytes),
                info.shapes_known ? std::to_string(info.report.peak_bytes).c_str() : "null");
}

// A label line for DOT: quotes and backslashes escaped.
std::string dot_text(const std::string& s)
{
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out;
}

// The activation a layer carries fused in (ncnn's param 9), or "".
std::string fused_activation(const Layer& l)
{
    static const char* const kNames[] = {"", "ReLU", "LeakyReLU", "Clip", "Sigmoid", "Mish", "HardSwish"};
    const bool has_activation_param = l.type.find("Convolution") != std::string::npos ||
                                      l.type.find("Deconvolution") != std::string::npos || l.type == "InnerProduct";
    const int a = has_activation_param ? l.params.get_int(9, 0) : 0;
    return a > 0 && a < 7 ? kNames[a] : "";
}

// The graph for Graphviz: a box per layer (type, name, output shapes, MACs,
// a fused activation), an edge per blob from its producer to each consumer.
void print_dot(const LoadedModel& model, const Info& info)
{
    const Graph& g = model.net.graph();
    std::printf("digraph \"%s\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n",
                dot_text(model.param_path).c_str());
    for (const LayerReport& r : info.report.layers) {
        const Layer& l = g.layers[r.layer];
        std::string label = l.type + "\\n" + dot_text(l.name);
        if (info.shapes_known) {
            label += "\\n" + dot_text(descs_str(r.outputs));
            if (r.macs > 0) label += "\\n" + human(static_cast<double>(r.macs), "MAC");
        }
        const std::string fused = fused_activation(l);
        if (!fused.empty()) label += "\\n+ " + fused + " (fused)";
        std::printf("  L%d [label=\"%s\"%s];\n", r.layer, label.c_str(), fused.empty() ? "" : ", style=bold");
    }
    std::vector<bool> drawn(g.layers.size(), false);
    for (const LayerReport& r : info.report.layers) drawn[static_cast<size_t>(r.layer)] = true;
    for (const LayerReport& r : info.report.layers)
        for (int b : g.layers[r.layer].bottoms) {
            const int from = g.blobs[b].producer;
            if (from < 0) continue;
            if (!drawn[static_cast<size_t>(from)]) { // a graph input (planning skips Input layers)
                drawn[static_cast<size_t>(from)] = true;
                std::printf("  L%d [label=\"%s\\n%s\", shape=ellipse];\n", from, g.layers[from].type.c_str(),
                            dot_text(g.layers[from].name).c_str());
            }
            std::printf("  L%d -> L%d [label=\"%s\"];\n", from, r.layer, dot_text(g.blobs[b].name).c_str());
        }
    std::printf("}\n");
}

// A blob of the plan: name, stored form, and where its bytes are.
std::string place_str(const Graph& g, const TensorDesc& d, const BlobPlacement& p)
{
    std::string s = g.blobs[static_cast<size_t>(p.blob)].name + " " + descs_str({d});
    if (d.int8_scale != 0.f) s += ":int8";
    if (p.home == "arena") return s + " @" + std::to_string(p.offset) + "+" + std::to_string(p.bytes);
    if (p.home == "view") return s + " view of " + g.blobs[static_cast<size_t>(p.of)].name;
    return s + " " + p.home;
}

// The plan as a value: per step the layer, where it runs, its precision, and
// its blobs (layout, dtype, arena offset + bytes, or what else holds them).
void print_plan(const LoadedModel& model, const Info& info)
{
    if (!info.shapes_known) throw UsageError("--plan needs every input's shape (pass --shape NAME=D0,D1,...)");
    const Graph& g = model.net.graph();
    std::printf("plan of %s: arena %lld bytes, peak %lld bytes, precision %s\n", model.param_path.c_str(),
                static_cast<long long>(info.report.arena_bytes), static_cast<long long>(info.report.peak_bytes),
                info.report.bf16 ? "bf16 where a layer can, else fp32" : "fp32");
    int step = 0;
    for (const LayerReport& r : info.report.layers) {
        const Layer& l = g.layers[r.layer];
        if (!r.planned_step) {
            std::printf("  -  %s '%s': evaluated while planning\n", l.type.c_str(), l.name.c_str());
            continue;
        }
        bool int8 = false;
        for (const auto* ds : {&r.inputs, &r.outputs})
            for (const TensorDesc& d : *ds) int8 = int8 || d.int8_scale != 0.f;
        std::printf("%3d  %s '%s' on %s, %s%s", step++, l.type.c_str(), l.name.c_str(), r.device.c_str(),
                    int8 ? "int8 activations" : "float", r.in_place ? ", in place" : "");
        if (r.scratch_bytes > 0)
            std::printf(", scratch @%lld+%lld", static_cast<long long>(r.scratch_offset),
                        static_cast<long long>(r.scratch_bytes));
        std::printf("\n");
        for (size_t i = 0; i < r.input_places.size(); ++i)
            std::printf("       in  %s\n", place_str(g, r.inputs[i], r.input_places[i]).c_str());
        for (size_t i = 0; i < r.output_places.size(); ++i)
            std::printf("       out %s\n", place_str(g, r.outputs[i], r.output_places[i]).c_str());
    }
}

} // namespace

int info_command(const std::vector<std::string>& argv)
{
    const Args args = parse_args(argv, {"--weights", "--shape", "--backend", "--device"}, {"--json", "--dot", "--plan"});
    if (args.positional.size() != 1) throw UsageError("info needs exactly one MODEL argument");
    if (args.last("--json") && args.last("--dot")) throw UsageError("--json and --dot exclude each other");
    if (args.last("--plan") && args.last("--dot")) throw UsageError("--plan and --dot exclude each other");
    LoadedModel model;
    model.onnx = args.onnx_limits();
    load_model(model, args.positional[0], args.last("--weights"), true);
    const Info info = gather(model, args);
    if (args.last("--json"))
        print_json(model, info, args.last("--plan") != nullptr);
    else if (args.last("--plan"))
        print_plan(model, info);
    else if (args.last("--dot"))
        print_dot(model, info);
    else
        print_table(model, info);
    return 0;
}

} // namespace kestrel::cli
