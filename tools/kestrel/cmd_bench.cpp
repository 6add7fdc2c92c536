// kestrel bench MODEL.param|DIR... [--threads N] [--loops N] [--warmup N]
//                [--shape [w,h,c]] [--shape NAME=[w,h,c]] [--profile]
// Times whole-model runs the way ncnn's benchncnn does: zero weights when there
// is no .bin, inputs filled with 0.01, untimed warm-up runs, then timed runs,
// one benchncnn-format line per model. Shapes here are in ncnn order [w,h,(d),c].
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
    std::string name, type;
    Shape output_shape;
    int64_t macs = 0;
    std::vector<double> ms;
};

void print_profile(const std::vector<LayerTiming>& layers, int64_t peak_bytes)
{
    double total = 0;
    for (const auto& l : layers) total += median(l.ms);
    std::vector<const LayerTiming*> order;
    for (const auto& l : layers) order.push_back(&l);
    std::stable_sort(order.begin(), order.end(), [](auto a, auto b) { return median(a->ms) > median(b->ms); });
    std::printf("  %-36s %-22s %-22s %10s %7s %9s\n", "layer", "type", "output", "median ms", "%", "GFLOP/s");
    for (const LayerTiming* l : order) {
        const double ms = median(l->ms);
        const double gflops = ms > 0 ? 2.0 * static_cast<double>(l->macs) / (ms * 1e6) : 0;
        std::printf("  %-36s %-22s %-22s %10.3f %6.1f%% %9.2f\n", l->name.c_str(), l->type.c_str(),
                    shape_str(l->output_shape).c_str(), ms, total > 0 ? 100 * ms / total : 0, gflops);
    }
    std::printf("  total of layer medians %.3f ms; peak activation memory %.3f MB\n", total, peak_bytes / 1e6);
}

void bench_model(const ModelJob& job, const std::map<std::string, Shape>& cli_shapes, int threads, int loops,
                 int warmup, bool profile)
{
    LoadedModel model;
    load_model(model, job.path, nullptr, true);
    Options options;
    options.threads = threads;
    Session session(model.net, options);
    std::vector<std::pair<std::string, Tensor>> inputs;
    for (const std::string& name : model.net.input_names()) {
        Shape shape;
        if (cli_shapes.count(name)) shape = cli_shapes.at(name);
        else if (cli_shapes.count("")) shape = cli_shapes.at("");
        else if (job.shapes.count("")) shape = job.shapes.at("");
        else shape = concrete_shape(model.net.input_shape(name));
        if (shape.empty() && model.net.input_shape(name).empty())
            fail(job.path, ": input '", name, "' declares no shape; pass --shape [w,h,c]");
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
    if (profile) {
        const Graph& g = model.net.graph();
        session.set_callbacks([&](const OpEvent&) { layer_start = Clock::now(); },
                              [&](const OpEvent& e) {
                                  const double ms = ms_since(layer_start);
                                  auto it = layer_index.find(e.layer_name);
                                  if (it == layer_index.end()) {
                                      LayerTiming t{e.layer_name, e.layer_type, {}, 0, {}};
                                      if (!e.outputs.empty()) t.output_shape = e.outputs[0].shape();
                                      std::vector<TensorDesc> in, out;
                                      for (const auto& x : e.inputs) in.push_back({x.shape(), x.dtype()});
                                      for (const auto& x : e.outputs) out.push_back({x.shape(), x.dtype()});
                                      for (const Layer& l : g.layers)
                                          if (l.name == e.layer_name) t.macs = l.op->macs(in, out);
                                      it = layer_index.emplace(e.layer_name, layers.size()).first;
                                      layers.push_back(t);
                                  }
                                  layers[it->second].ms.push_back(ms);
                              });
    }
    std::vector<double> times;
    for (int i = 0; i < loops; ++i) {
        const Clock::time_point t0 = Clock::now();
        run_once();
        times.push_back(ms_since(t0));
    }
    // benchncnn's columns, then the median: the figure to quote on a noisy machine.
    const auto [tmin, tmax] = std::minmax_element(times.begin(), times.end());
    double tsum = 0;
    for (double t : times) tsum += t;
    std::printf("%20s  min = %7.2f  max = %7.2f  avg = %7.2f  median = %7.2f\n", job.name.c_str(), *tmin, *tmax,
                tsum / loops, median(times));
    std::fflush(stdout);
    if (profile) print_profile(layers, session.peak_bytes());
}

} // namespace

int bench_command(const std::vector<std::string>& argv)
{
    const Args args = parse_args(argv, {"--threads", "--loops", "--warmup", "--shape"}, {"--profile"});
    if (args.positional.empty()) throw UsageError("bench needs at least one MODEL.param or DIR");
    const int threads = args.int_option("--threads", 1, 1, 1024);
    const int loops = args.int_option("--loops", 4, 1, 1000000);
    const int warmup = args.int_option("--warmup", 8, 0, 1000000);
    const bool profile = args.last("--profile") != nullptr;
    std::map<std::string, Shape> shapes;
    if (args.options.count("--shape"))
        for (const std::string& s : args.options.at("--shape")) {
            const size_t eq = s.find('=');
            const std::string name = eq == std::string::npos ? "" : s.substr(0, eq);
            shapes[name] = from_ncnn_order(parse_dims(eq == std::string::npos ? s : s.substr(eq + 1)));
        }
    std::printf("loop_count = %d\nnum_threads = %d\nwarmup = %d\nisa = %s\n", loops, threads, warmup,
                cpu_isa_name().c_str());
    int failures = 0;
    for (const ModelJob& job : expand_jobs(args.positional)) {
        try {
            bench_model(job, shapes, threads, loops, warmup, profile);
        } catch (const Error& e) {
            std::fprintf(stderr, "kestrel bench: error: %s\n", e.what());
            ++failures;
        }
    }
    return failures ? 1 : 0;
}

} // namespace kestrel::cli
