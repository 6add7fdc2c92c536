#include "cli.h"

#include "onnx_module.h"

#include <algorithm>
#include <optional>
#include <cstdio>
#include <fstream>

namespace kestrel::cli {

const std::string* Args::last(const std::string& name) const
{
    auto it = options.find(name);
    return it == options.end() || it->second.empty() ? nullptr : &it->second.back();
}

int Args::int_option(const std::string& name, int def, int lo, int hi) const
{
    const std::string* v = last(name);
    if (v == nullptr) return def;
    try {
        size_t used = 0;
        const long n = std::stol(*v, &used);
        if (used == v->size() && n >= lo && n <= hi) return static_cast<int>(n);
    } catch (const std::exception&) {
    }
    throw UsageError(detail::concat(name, " expects an integer in [", lo, ", ", hi, "], got '", *v, "'"));
}

Options::Precision Args::precision_option() const
{
    const std::string* v = last("--precision");
    if (v == nullptr || *v == "fp32") return Options::Precision::F32;
    if (*v == "bf16") return Options::Precision::BF16;
    throw UsageError("--precision expects fp32 or bf16, got '" + *v + "'");
}

void Args::backend_options(Options& options) const
{
    const std::string* v = last("--backend");
    if (v == nullptr || *v == "cpu") options.backend = Options::Backend::CPU;
    else if (*v == "vulkan") options.backend = Options::Backend::Vulkan;
    else throw UsageError("--backend expects cpu or vulkan, got '" + *v + "'");
    options.device = int_option("--device", 0, 0, 1 << 20);
    if (last("--device") && options.backend == Options::Backend::CPU) throw UsageError("--device needs --backend vulkan");
    options.fp16_storage = last("--fp16-storage") != nullptr;
    if (options.fp16_storage && options.backend == Options::Backend::CPU)
        throw UsageError("--fp16-storage needs --backend vulkan");
}

OnnxImportOptions Args::onnx_limits() const
{
    OnnxImportOptions o;
    if (!options.count("--onnx-limit")) return o;
    for (const std::string& s : options.at("--onnx-limit")) {
        const auto [name, value] = split_assignment(s, "--onnx-limit");
        long long v = 0;
        try {
            size_t used = 0;
            v = std::stoll(value, &used);
            if (used != value.size() || v < 1) throw UsageError("");
        } catch (const std::exception&) {
            throw UsageError("--onnx-limit " + name + " expects a positive number, got '" + value + "'");
        }
        if (name == "depth") o.max_nesting_depth = static_cast<int>(std::min<long long>(v, 1 << 20));
        else if (name == "subgraphs") o.max_subgraphs = v;
        else if (name == "nodes") o.max_nodes = v;
        else throw UsageError("--onnx-limit takes depth=N, subgraphs=N or nodes=N, got '" + s + "'");
    }
    return o;
}

Args parse_args(const std::vector<std::string>& argv, std::vector<std::string> with_value,
                const std::vector<std::string>& without_value)
{
    with_value.push_back("--onnx-limit"); // every command that loads a model takes it
    Args a;
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& s = argv[i];
        if (s.size() < 2 || s.compare(0, 2, "--") != 0) {
            a.positional.push_back(s);
            continue;
        }
        std::string name = s, value;
        const size_t eq = s.find('=');
        const bool inline_value = eq != std::string::npos;
        if (inline_value) {
            name = s.substr(0, eq);
            value = s.substr(eq + 1);
        }
        if (std::find(without_value.begin(), without_value.end(), name) != without_value.end()) {
            a.options[name].push_back("1");
            continue;
        }
        if (std::find(with_value.begin(), with_value.end(), name) == with_value.end())
            throw UsageError("unknown option " + name);
        if (!inline_value) {
            if (i + 1 >= argv.size()) throw UsageError(name + " needs a value");
            value = argv[++i];
        }
        a.options[name].push_back(value);
    }
    return a;
}

std::pair<std::string, std::string> split_assignment(const std::string& text, const char* what,
                                                     const std::function<bool(const std::string&)>& is_name)
{
    size_t eq = text.find('=');
    for (size_t at = eq; is_name && at != std::string::npos; at = text.find('=', at + 1))
        if (is_name(text.substr(0, at))) {
            eq = at;
            break;
        }
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        throw UsageError(detail::concat(what, " expects NAME=VALUE, got '", text, "'"));
    return {text.substr(0, eq), text.substr(eq + 1)};
}

bool is_input_of(const Net& net, const std::string& name)
{
    const std::vector<std::string> names = net.input_names();
    return std::find(names.begin(), names.end(), name) != names.end();
}

namespace {

// Comma-separated numbers, each read whole by `read` (std::stoll, std::stof);
// nullopt when one is empty or malformed.
template <class T, class Read> std::optional<std::vector<T>> parse_list(const std::string& text, const Read& read)
{
    std::vector<T> values;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        const std::string part = text.substr(start, comma - start);
        size_t used = 0;
        try {
            values.push_back(read(part, &used));
        } catch (const std::exception&) {
            return std::nullopt;
        }
        if (used != part.size()) return std::nullopt;
        start = comma + 1;
    }
    return values;
}

} // namespace

std::vector<int64_t> parse_dims(const std::string& text)
{
    std::string t = text;
    t.erase(std::remove_if(t.begin(), t.end(), [](char c) { return c == '[' || c == ']' || c == '(' || c == ')' || c == ' '; }),
            t.end());
    const auto dims = parse_list<int64_t>(t, [](const std::string& s, size_t* used) { return std::stoll(s, used); });
    if (!dims || std::any_of(dims->begin(), dims->end(), [](int64_t v) { return v <= 0 || v > (int64_t(1) << 31); }))
        throw UsageError("bad shape '" + text + "': dimensions must be positive integers");
    return *dims;
}

std::vector<float> parse_floats(const std::string& text, const char* what)
{
    const auto values = parse_list<float>(text, [](const std::string& s, size_t* used) { return std::stof(s, used); });
    if (!values) throw UsageError(std::string("bad ") + what + " '" + text + "'");
    return *values;
}

void load_model(LoadedModel& m, const std::string& path, const std::string* weights, bool zero_if_missing,
                bool optimize)
{
    m.param_path = path;
    if (!std::ifstream(path).good()) fail(path, ": cannot open model file");
    m.format = detect_model_format(path);
    if (m.format == ModelFormat::Onnx && weights != nullptr)
        throw UsageError("--weights does not apply to ONNX models");
    // ONNX models through the importer module, with this command's limits.
    const OnnxImportOptions limits = m.onnx;
    register_model_loader(ModelFormat::Onnx, [limits](Net& net, const std::string& file, const ModelFileOptions& o) {
        OnnxImportOptions options = limits;
        options.optimize = o.optimize;
        import_onnx(net, file, options);
        return file;
    });
    ModelFileOptions options;
    if (weights != nullptr) options.weights = *weights;
    options.zero_weights_if_missing = zero_if_missing;
    options.optimize = optimize;
    m.weights_path = load_model_file(m.net, path, options).weights;
}

void check_input_size(const std::string& model, const std::string& input, const Shape& shape, DType dtype,
                      int64_t max_bytes)
{
    int64_t n = 0;
    try {
        n = shape_numel(shape);
    } catch (const Error&) {
        throw TooLargeError(detail::concat(model, ": input '", input, "' with shape ", shape_str(shape),
                                           " is too large (element count overflows)"));
    }
    const int64_t elem = static_cast<int64_t>(dtype_size(dtype));
    if (n > max_bytes / elem)
        throw TooLargeError(detail::concat(model, ": input '", input, "' with shape ", shape_str(shape), " is too large (",
                                           n, " elements, limit ", max_bytes, " bytes)"));
}

std::string json_string(const std::string& s)
{
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string json_shape(const Shape& shape)
{
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
    return out + "]";
}


Shape concrete_shape(Shape shape)
{
    for (auto& d : shape)
        if (d < 0) d = 1;
    return shape;
}

Tensor random_tensor(const Shape& shape, uint32_t seed)
{
    Tensor t(shape, DType::F32);
    uint32_t state = seed * 2654435761u + 12345u;
    float* p = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        p[i] = static_cast<float>(state >> 8) / 8388608.f - 1.f;
    }
    return t;
}

} // namespace kestrel::cli
