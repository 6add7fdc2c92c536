// kestrel run MODEL [--weights FILE] [--input NAME=FILE.npy]... [--output NAME=FILE.npy]...
//                   [--shape NAME=d0,d1,...]... [--threads N]
//                   [--image FILE [--size W,H] [--mean ...] [--norm ...] [--pixel-type T] [--resize F]]
//                   [--topk K [--labels FILE]]
#include <cstdio>

#include "cli.h"

namespace kestrel::cli {

namespace {

// A sequence's element k in .npy files: FILE.npy -> FILE_k.npy.
std::string element_file(const std::string& file, int64_t k)
{
    const bool npy = file.size() > 4 && file.compare(file.size() - 4, 4, ".npy") == 0;
    return (npy ? file.substr(0, file.size() - 4) : file) + "_" + std::to_string(k) + ".npy";
}

// A sequence input from FILE_0.npy, FILE_1.npy, ... (as many as there are, maybe none).
Tensor read_sequence_npy(const std::string& file)
{
    std::vector<Tensor> items;
    for (int64_t k = 0; std::FILE* f = std::fopen(element_file(file, k).c_str(), "rb"); ++k) {
        std::fclose(f);
        items.push_back(read_npy(element_file(file, k)));
    }
    return Tensor::sequence(items);
}

void write_sequence_npy(const std::string& file, const Tensor& seq)
{
    const std::vector<Tensor> items = seq.items();
    for (size_t k = 0; k < items.size(); ++k) write_npy(element_file(file, static_cast<int64_t>(k)), items[k]);
}

void print_summary(const std::string& name, const Tensor& t)
{
    if (t.is_sequence()) { // its elements, each as a tensor
        std::printf("%s: sequence of %lld\n", name.c_str(), static_cast<long long>(t.numel()));
        const std::vector<Tensor> items = t.items();
        for (size_t k = 0; k < items.size(); ++k) print_summary(name + "[" + std::to_string(k) + "]", items[k]);
        return;
    }
    std::printf("%s: shape %s dtype %s", name.c_str(), shape_str(t.shape()).c_str(), dtype_name(t.dtype()));
    if (t.numel() == 0) {
        std::printf(" (empty)\n");
        return;
    }
    if (t.is_optional()) { // holds one value
        std::printf("\n");
        return print_summary(name + "[0]", t.items()[0]);
    }
    if (t.dtype() == DType::String) {
        std::printf(" first");
        for (int64_t i = 0; i < std::min<int64_t>(t.numel(), 6); ++i) std::printf(" \"%s\"", t.data<std::string>()[i].c_str());
        std::printf("\n");
        return;
    }
    const Tensor f = t.dtype() == DType::F64 ? t : t.to(DType::F64);
    const double* v = f.data<double>();
    double lo = v[0], hi = v[0], sum = 0;
    for (int64_t i = 0; i < f.numel(); ++i) {
        lo = std::min(lo, v[i]);
        hi = std::max(hi, v[i]);
        sum += v[i];
    }
    std::printf(" min %.6g max %.6g mean %.6g first", lo, hi, sum / static_cast<double>(f.numel()));
    for (int64_t i = 0; i < std::min<int64_t>(f.numel(), 6); ++i) std::printf(" %.6g", v[i]);
    std::printf("\n");
}

} // namespace

int run_command(const std::vector<std::string>& argv)
{
    const Args args = parse_args(argv,
                                 {"--weights", "--input", "--output", "--threads", "--shape", "--image", "--size",
                                  "--mean", "--norm", "--pixel-type", "--resize", "--topk", "--labels", "--precision",
                                  "--backend", "--device"},
                                 {"--no-optimize", "--fp16-weights", "--fp16-storage"});
    if (args.positional.size() != 1) throw UsageError("run needs exactly one MODEL argument");
    LoadedModel model;
    model.onnx = args.onnx_limits();
    LoadOptions lo;
    lo.fp16_weights = args.last("--fp16-weights") != nullptr;
    model.net.set_load_options(lo);
    load_model(model, args.positional[0], args.last("--weights"), false, args.last("--no-optimize") == nullptr);
    Options options;
    options.threads = args.int_option("--threads", 1, 1, 1024);
    options.precision = args.precision_option();
    args.backend_options(options);
    Session session(model.net, options);

    const auto is_input = [&](const std::string& name) { return is_input_of(model.net, name); };
    std::map<std::string, Shape> shapes;
    if (args.options.count("--shape"))
        for (const auto& s : args.options.at("--shape")) {
            const auto kv = split_assignment(s, "--shape", is_input);
            shapes[kv.first] = parse_dims(kv.second);
        }
    std::map<std::string, Tensor> given;
    if (args.options.count("--input"))
        for (const auto& s : args.options.at("--input")) {
            const auto kv = split_assignment(s, "--input", is_input);
            if (!is_input(kv.first))
                fail(model.param_path, ": the model has no input named '", kv.first, "'");
            given[kv.first] = model.net.input_dtype(kv.first) == DType::Sequence ? read_sequence_npy(kv.second)
                                                                                  : read_npy(kv.second);
        }
    if (args.last("--image")) {
        // The picture is the first input (unless an .npy gives it).
        const std::string first = model.net.input_names().at(0);
        if (given.count(first)) throw UsageError("--image and --input " + first + "=... give the same input");
        given[first] = image_input(args, shapes.count(first) ? shapes[first] : model.net.input_shape(first),
                                   model.param_path);
    }
    uint32_t seed = 1;
    for (const std::string& name : model.net.input_names()) {
        if (given.count(name)) {
            session.set_input(name, given[name]);
            continue;
        }
        const Shape declared = model.net.input_shape(name);
        Shape shape = shapes.count(name) ? shapes[name] : concrete_shape(declared);
        if (shape.empty() && declared.empty())
            fail(model.param_path, ": input '", name, "' declares no shape; pass --input ", name,
                 "=FILE.npy or --shape ", name, "=C,H,W");
        check_input_size(model.param_path, name, shape, DType::F32, options.max_tensor_bytes);
        session.set_input(name, random_tensor(shape, seed++).to(model.net.input_dtype(name)));
    }

    std::vector<std::pair<std::string, std::string>> outputs; // blob, file ("" = print)
    if (args.options.count("--output"))
        for (const auto& s : args.options.at("--output")) outputs.push_back(
                split_assignment(s, "--output", [&](const std::string& name) { return model.net.has_blob(name); }));
    else
        for (const auto& name : model.net.output_names()) outputs.push_back({name, ""});
    std::vector<std::string> names;
    for (const auto& o : outputs) {
        if (!model.net.has_blob(o.first)) fail(model.param_path, ": the model has no blob named '", o.first, "'");
        names.push_back(o.first);
    }
    const std::vector<Tensor> results = session.run(names);
    const int topk = args.int_option("--topk", 0, 1, 1 << 30);
    for (size_t i = 0; i < outputs.size(); ++i) {
        if (!outputs[i].second.empty() && results[i].is_sequence()) write_sequence_npy(outputs[i].second, results[i]);
        else if (!outputs[i].second.empty()) write_npy(outputs[i].second, results[i]);
        else if (topk > 0) print_topk(outputs[i].first, results[i], topk, args.last("--labels"));
        else print_summary(outputs[i].first, results[i]);
    }
    return 0;
}

} // namespace kestrel::cli
