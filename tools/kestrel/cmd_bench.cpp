// kestrel bench MODEL|DIR... [--threads N] [--loops N] [--warmup N]
//                [--shape D0,D1,...] [--shape NAME=D0,D1,...] [--profile] [--json] [--no-optimize]
//                [--fp16-weights] [--precision fp32|bf16]
// Times whole-model runs the way ncnn's benchncnn does: zero weights when there
// is no .bin, inputs filled with 0.01, untimed warm-up runs, then timed runs,
// one benchncnn-format line per model, and a summary table after several.
// Shapes are in ncnn's order [w,h,(d),c] for .param models (and a DIR's
// shapes.txt), in the model's own order for .onnx ones. --json prints one JSON
// document instead (per model: the times, the layer profile with --profile,
// or the error).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "cli.h"
#include "core/cpu_features.h"
#include "graph/graph.h"
#include "runtime/analysis.h"

namespace kestrel::cli {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v)
{
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ncnn [w,h,(d),c] -> our (c,(d),h,w).
Shape from_ncnn_order(const std::vector<int64_t>& whc) { return Shape(whc.rbegin(), whc.rend()); }

struct ModelJob {
    std::string path;
    std::string name;                   // printed in the result line
    std::map<std::string, Shape> shapes; // per input; "" = every input
};

bool is_directory(const std::string& path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Reads "name w,h,c" lines (comments with #) from DIR/shapes.txt.
std::map<std::string, Shape> read_shapes_file(const std::string& path)
{
    std::map<std::string, Shape> shapes;
    std::ifstream in(path);
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line.resize(hash);
        std::istringstream ss(line);
        std::string name, dims;
        if (!(ss >> name)) continue;
        if (!(ss >> dims)) fail(path, ":", line_no, ": expected 'name w,h,c'");
        try {
            shapes[name] = from_ncnn_order(parse_dims(dims));
        } catch (const Error& e) {
            fail(path, ":", line_no, ": ", e.what());
        }
    }
    return shapes;
}

std::vector<ModelJob> expand_jobs(const std::vector<std::string>& args)
{
    std::vector<ModelJob> jobs;
    for (const std::string& arg : args) {
        if (!is_directory(arg)) {
            jobs.push_back({arg, arg, {}});
            continue;
        }
        const std::map<std::string, Shape> shapes = read_shapes_file(arg + "/shapes.txt");
        std::vector<std::string> names;
        if (DIR* d = opendir(arg.c_str())) {
            while (dirent* e = readdir(d)) {
                const std::string f = e->d_name;
                if (f.size() > 6 && f.compare(f.size() - 6, 6, ".param") == 0) names.push_back(f);
            }
            closedir(d);
        }
        std::sort(names.begin(), names.end());
        for (const auto& f : names) {
            ModelJob job{arg + "/" + f, f.substr(0, f.size() - 6), {}};
            auto it = shapes.find(job.name);
            if (it != shapes.end()) job.shapes[""] = it->second;
            jobs.push_back(job);
        }
    }
    return jobs;
}

struct LayerTiming {
    std::string name, type, device; // device: where it ran ("cpu" or the GPU's name)
    Shape output_shape;
    int64_t macs = 0;
    std::vector<double> ms;        // wall time around the layer (its transfers included)
    std::vector<double> device_ms; // on a device: the device's own time (its timestamps)
};

struct BenchResult {
    std::string name, error; // error: empty when the model ran
    double min = 0, max = 0, avg = 0, median = 0;
    std::vector<LayerTiming> layers; // with --profile
    int64_t peak_bytes = 0;
};

// Layers by descending median time.
std::vector<const LayerTiming*> slowest_first(const std::vector<LayerTiming>& layers)
{
    std::vector<const LayerTiming*> order;
    for (const auto& l : layers) order.push_back(&l);
    std::stable_sort(order.begin(), order.end(), [](auto a, auto b) { return median(a->ms) > median(b->ms); });
    return order;
}

void print_profile(const std::vector<LayerTiming>& layers, int64_t peak_bytes)
{
    double total = 0;
    for (const auto& l : layers) total += median(l.ms);
    bool on_device = false;
    for (const auto& l : layers) on_device = on_device || !l.device_ms.empty();
    std::printf("  %-36s %-22s %-22s %10s %7s %9s%s  %s\n", "layer", "type", "output", "median ms", "%", "GFLOP/s",
                on_device ? "    gpu ms" : "", "device");
    for (const LayerTiming* l : slowest_first(layers)) {
        const double ms = median(l->ms);
        const double gflops = ms > 0 ? 2.0 * static_cast<double>(l->macs) / (ms * 1e6) : 0;
        char gpu[32] = ""; // the device's time, "-" for layers on the CPU
        if (on_device && !l->device_ms.empty()) std::snprintf(gpu, sizeof gpu, "%10.3f", median(l->device_ms));
        else if (on_device) std::snprintf(gpu, sizeof gpu, "%10s", "-");
        std::printf("  %-36s %-22s %-22s %10.3f %6.1f%% %9.2f%s  %s\n", l->name.c_str(), l->type.c_str(),
                    shape_str(l->output_shape).c_str(), ms, total > 0 ? 100 * ms / total : 0, gflops, gpu,
                    l->device.c_str());
    }
    std::printf("  total of layer medians %.3f ms; peak activation memory %.3f MB\n", total, peak_bytes / 1e6);
}

// --shape values as written, per input name ("" = every input).
using ShapeArgs = std::map<std::string, std::vector<int64_t>>;

struct BenchSettings {
    int threads = 1, loops = 4, warmup = 8;
    bool profile = false, optimize = true, fp16_weights = false;
    Options::Precision precision = Options::Precision::F32;
    Options::Backend backend = Options::Backend::CPU;
    int device = 0;
    OnnxImportOptions onnx_limits;
};

BenchResult bench_model(const ModelJob& job, const ShapeArgs& cli_shapes, const BenchSettings& settings)
{
    const int threads = settings.threads, loops = settings.loops, warmup = settings.warmup;
    const bool profile = settings.profile;
    LoadedModel model;
    model.onnx = settings.onnx_limits;
    // Only the layers' (packed) copies of the weights are kept, as an
    // application that only runs the model would (ncnn's lightmode); a device
    // backend builds its kernels from the weights as loaded.
    LoadOptions lo;
    lo.keep_loaded_weights = settings.backend != Options::Backend::CPU;
    lo.fp16_weights = settings.fp16_weights;
    model.net.set_load_options(lo);
    load_model(model, job.path, nullptr, true, settings.optimize);
    const bool onnx = model.format == ModelFormat::Onnx;
    auto given = [&](const std::vector<int64_t>& dims) { return onnx ? Shape(dims) : from_ncnn_order(dims); };
    Options options;
    options.threads = threads;
    options.precision = settings.precision;
    options.backend = settings.backend;
    options.device = settings.device;
    Session session(model.net, options);
    std::vector<std::pair<std::string, Tensor>> inputs;
    for (const std::string& name : model.net.input_names()) {
        Shape shape;
        if (cli_shapes.count(name)) shape = given(cli_shapes.at(name));
        else if (cli_shapes.count("")) shape = given(cli_shapes.at(""));
        else if (job.shapes.count("")) shape = job.shapes.at("");
        else shape = concrete_shape(model.net.input_shape(name));
        if (shape.empty() && model.net.input_shape(name).empty())
            fail(job.path, ": input '", name, "' declares no shape; pass --shape ", onnx ? "D0,D1,..." : "[w,h,c]");
        check_input_size(job.path, name, shape, DType::F32, options.max_tensor_bytes);
        Tensor t(shape, DType::F32);
        std::fill(t.data<float>(), t.data<float>() + t.numel(), 0.01f);
        inputs.push_back({name, t.to(model.net.input_dtype(name))});
    }
    const std::vector<std::string> outputs = model.net.output_names();
    auto run_once = [&] {
        for (const auto& in : inputs) session.set_input(in.first, in.second); // fresh state: nothing cached
        session.run(outputs);
    };
    for (int i = 0; i < warmup; ++i) run_once();

    std::vector<LayerTiming> layers;
    std::map<std::string, size_t> layer_index;
    Clock::time_point layer_start;
    // Shapes and MACs as planned (the callbacks see blobs as stored, some in channel blocks).
    ModelReport report;
    std::map<std::string, const LayerReport*> planned;
    if (profile) {
        std::map<std::string, TensorDesc> input_descs;
        for (const auto& in : inputs) input_descs[in.first] = TensorDesc(in.second.shape(), in.second.dtype());
        report = analyze_model(model.net, input_descs, options);
        for (const LayerReport& r : report.layers) planned[model.net.graph().layers[r.layer].name] = &r;
        session.set_callbacks([&](const OpEvent&) { layer_start = Clock::now(); },
                              [&](const OpEvent& e) {
                                  const double ms = ms_since(layer_start);
                                  auto it = layer_index.find(e.layer_name);
                                  if (it == layer_index.end()) {
                                      LayerTiming t{e.layer_name, e.layer_type, "cpu", {}, 0, {}, {}};
                                      auto r = planned.find(e.layer_name);
                                      if (r != planned.end()) {
                                          if (!r->second->outputs.empty()) t.output_shape = r->second->outputs[0].shape;
                                          t.macs = r->second->macs;
                                          if (!r->second->device.empty()) t.device = r->second->device;
                                      }
                                      it = layer_index.emplace(e.layer_name, layers.size()).first;
                                      layers.push_back(t);
                                  }
                                  layers[it->second].ms.push_back(ms);
                                  if (e.device_ms >= 0) layers[it->second].device_ms.push_back(e.device_ms);
                              },
                              true);
    }
    std::vector<double> times;
    for (int i = 0; i < loops; ++i) {
        const Clock::time_point t0 = Clock::now();
        run_once();
        times.push_back(ms_since(t0));
    }
    BenchResult r;
    r.name = job.name;
    const auto [tmin, tmax] = std::minmax_element(times.begin(), times.end());
    r.min = *tmin;
    r.max = *tmax;
    for (double t : times) r.avg += t / loops;
    r.median = median(times);
    r.layers = std::move(layers);
    r.peak_bytes = session.peak_bytes();
    return r;
}

// benchncnn's columns, then the median: the figure to quote on a noisy machine.
void print_result(const BenchResult& r, bool profile)
{
    std::printf("%20s  min = %7.2f  max = %7.2f  avg = %7.2f  median = %7.2f\n", r.name.c_str(), r.min, r.max, r.avg,
                r.median);
    std::fflush(stdout);
    if (profile) print_profile(r.layers, r.peak_bytes);
}

void print_summary(const std::vector<BenchResult>& results, int threads)
{
    std::printf("\nsummary (%d thread%s, ms)\n%-28s %10s %10s\n", threads, threads == 1 ? "" : "s", "model",
                "median", "min");
    for (const BenchResult& r : results) {
        if (r.error.empty())
            std::printf("%-28s %10.2f %10.2f\n", r.name.c_str(), r.median, r.min);
        else
            std::printf("%-28s %10s %10s  (failed)\n", r.name.c_str(), "-", "-");
    }
}

std::string json_number(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", v);
    return buf;
}

void print_json(const std::vector<BenchResult>& results, int loops, int threads, int warmup)
{
    std::printf("{\"loop_count\": %d, \"num_threads\": %d, \"warmup\": %d, \"isa\": %s, \"models\": [", loops,
                threads, warmup, json_string(cpu_isa_name()).c_str());
    for (size_t i = 0; i < results.size(); ++i) {
        const BenchResult& r = results[i];
        std::printf("%s\n  {\"name\": %s", i ? "," : "", json_string(r.name).c_str());
        if (!r.error.empty()) {
            std::printf(", \"error\": %s}", json_string(r.error).c_str());
            continue;
        }
        std::printf(", \"min_ms\": %s, \"max_ms\": %s, \"avg_ms\": %s, \"median_ms\": %s, \"peak_bytes\": %lld",
                    json_number(r.min).c_str(), json_number(r.max).c_str(), json_number(r.avg).c_str(),
                    json_number(r.median).c_str(), static_cast<long long>(r.peak_bytes));
        if (!r.layers.empty()) {
            std::printf(", \"layers\": [");
            const std::vector<const LayerTiming*> order = slowest_first(r.layers);
            for (size_t k = 0; k < order.size(); ++k)
                std::printf("%s\n    {\"name\": %s, \"type\": %s, \"output\": %s, \"median_ms\": %s, \"macs\": %lld%s%s}",
                            k ? "," : "", json_string(order[k]->name).c_str(), json_string(order[k]->type).c_str(),
                            json_shape(order[k]->output_shape).c_str(), json_number(median(order[k]->ms)).c_str(),
                            static_cast<long long>(order[k]->macs), order[k]->device_ms.empty() ? "" : ", \"device_ms\": ",
                            order[k]->device_ms.empty() ? "" : json_number(median(order[k]->device_ms)).c_str());
            std::printf("]");
        }
        std::printf("}");
    }
    std::printf("\n]}\n");
}

} // namespace

int bench_command(const std::vector<std::string>& argv)
{
    const Args args =
        parse_args(argv, {"--threads", "--loops", "--warmup", "--shape", "--precision", "--backend", "--device"},
                   {"--profile", "--json", "--no-optimize", "--fp16-weights", "--fp16-storage"});
    if (args.positional.empty()) throw UsageError("bench needs at least one MODEL.param or DIR");
    BenchSettings settings;
    settings.threads = args.int_option("--threads", 1, 1, 1024);
    settings.loops = args.int_option("--loops", 4, 1, 1000000);
    settings.warmup = args.int_option("--warmup", 8, 0, 1000000);
    settings.profile = args.last("--profile") != nullptr;
    settings.optimize = args.last("--no-optimize") == nullptr;
    settings.fp16_weights = args.last("--fp16-weights") != nullptr;
    settings.onnx_limits = args.onnx_limits();
    settings.precision = args.precision_option();
    Options backend;
    args.backend_options(backend);
    settings.backend = backend.backend;
    settings.device = backend.device;
    const int threads = settings.threads, loops = settings.loops, warmup = settings.warmup;
    const bool profile = settings.profile;
    const bool json = args.last("--json") != nullptr;
    ShapeArgs shapes;
    if (args.options.count("--shape"))
        for (const std::string& s : args.options.at("--shape")) {
            const size_t eq = s.find('=');
            const std::string name = eq == std::string::npos ? "" : s.substr(0, eq);
            shapes[name] = parse_dims(eq == std::string::npos ? s : s.substr(eq + 1));
        }
    if (!json)
        std::printf("loop_count = %d\nnum_threads = %d\nwarmup = %d\nisa = %s\n", loops, threads, warmup,
                    cpu_isa_name().c_str());
    std::vector<BenchResult> results;
    int failures = 0;
    for (const ModelJob& job : expand_jobs(args.positional)) {
        try {
            results.push_back(bench_model(job, shapes, settings));
            if (!json) print_result(results.back(), profile);
        } catch (const Error& e) {
            if (!json) std::fprintf(stderr, "kestrel bench: error: %s\n", e.what());
            BenchResult failed;
            failed.name = job.name;
            failed.error = e.what();
            results.push_back(failed);
            ++failures;
        }
    }
    if (json)
        print_json(results, loops, threads, warmup);
    else if (results.size() > 1)
        print_summary(results, threads);
    return failures ? 1 : 0;
}

} // namespace kestrel::cli
