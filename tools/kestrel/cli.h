// Shared pieces of the `kestrel` subcommands: argument parsing and model loading.
#pragma once
#include <map>
#include <functional>
#include <string>
#include <vector>

#include "kestrel/kestrel.h"
#include "kestrel/model_file.h"
#include "kestrel/onnx.h"

namespace kestrel::cli {

// Thrown for a malformed command line (exit status 2).
struct UsageError : Error {
    using Error::Error;
};

struct Args {
    std::vector<std::string> positional;
    std::map<std::string, std::vector<std::string>> options; // "--threads" -> values
    const std::string* last(const std::string& name) const;
    int int_option(const std::string& name, int def, int lo, int hi) const;
    // --precision fp32|bf16 (default fp32).
    Options::Precision precision_option() const;
    // --backend cpu|vulkan (default cpu) and --device N (default 0) into `options`.
    void backend_options(Options& options) const;
    // --onnx-limit depth=N|subgraphs=N|nodes=N (any command that loads a model).
    OnnxImportOptions onnx_limits() const;
};

// `flags_with_value`: options that take a value; any other --x is a usage error.
Args parse_args(const std::vector<std::string>& argv, std::vector<std::string> flags_with_value,
                const std::vector<std::string>& flags_without_value = {});

// "name=value" -> {name, value}. Model names may hold '=' themselves: the
// split is at the first '=' whose left side `is_name` accepts (else the first).
std::pair<std::string, std::string> split_assignment(const std::string& text, const char* what,
                                                     const std::function<bool(const std::string&)>& is_name = {});
// Whether `name` is one of the model's inputs.
bool is_input_of(const Net& net, const std::string& name);
// "1,3,224,224" or "[224,224,3]" -> numbers as written.
std::vector<int64_t> parse_dims(const std::string& text);
// "0.485,0.456,0.406" -> the numbers; a malformed one is a usage error naming `what`.
std::vector<float> parse_floats(const std::string& text, const char* what);

struct LoadedModel {
    Net net;
    std::string param_path;
    std::string weights_path; // empty when no weights were needed or found
    ModelFormat format = ModelFormat::Unknown; // told from the file's content
    OnnxImportOptions onnx;   // for an ONNX model (its optimize flag is load_model's)
};

// Loads a model of any format through load_model_file (kestrel/model_file.h):
// ncnn's .param / .param.bin and its weights (default: beside it, X.bin), ONNX
// through the importer module. With zero_weights_if_missing, missing weights
// are zeros (bench/info). Unless optimize is false (--no-optimize), an ONNX
// model is optimized and an ncnn model gets the fusions that keep its bits
// (LoadOptions::fuse_layers).
void load_model(LoadedModel& model, const std::string& path, const std::string* weights, bool zero_weights_if_missing,
                bool optimize = true);

// Deterministic pseudo-random input in [-1, 1).
Tensor random_tensor(const Shape& shape, uint32_t seed);

// --image FILE [--size W,H] [--mean V,..] [--norm V,..] [--pixel-type RGB|BGR|GRAY] [--resize FILTER]:
// the picture as an input of the `declared` shape ((c,h,w), or ONNX's (1,c,h,w); empty: unknown).
Tensor image_input(const Args& args, const Shape& declared, const std::string& model_path);
// The same for the picture at `path` (the other options as above).
Tensor image_input(const Args& args, const std::string& path, const Shape& declared, const std::string& model_path);
bool is_picture_path(const std::string& path);
// --topk K [--labels FILE]: the K largest values of `scores` with their indices (and labels).
void print_topk(const std::string& name, const Tensor& scores, int k, const std::string* labels_path);

int run_command(const std::vector<std::string>& args);
int info_command(const std::vector<std::string>& args);
int bench_command(const std::vector<std::string>& args);
int convert_command(const std::vector<std::string>& args);
int quantize_command(const std::vector<std::string>& args);
// Throws unless a tensor of this shape and dtype fits `max_bytes` (naming model and input).
void check_input_size(const std::string& model, const std::string& input, const Shape& shape, DType dtype,
                      int64_t max_bytes);
// Declared shape with dims that may vary (-1) set to 1.
Shape concrete_shape(Shape shape);

// JSON pieces for --json output: a quoted, escaped string; a shape as an array.
std::string json_string(const std::string& s);
std::string json_shape(const Shape& shape);

} // namespace kestrel::cli
