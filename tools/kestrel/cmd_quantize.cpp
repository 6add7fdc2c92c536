// kestrel quantize MODEL OUT.param OUT.bin --calibration DIR [--method kl|minmax|percentile] [--percentile P]
//                  [--eval DIR] [--threads N] [--weights FILE] [--no-requantize]
//                  [picture options as for run --image]
// Post-training int8 quantization (kestrel/quantize.h): calibrates on DIR's
// samples, writes an int8 ncnn model, and reports how closely the int8
// model's outputs follow the float model's on the calibration set (or on
// --eval DIR's samples).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli.h"
#include "graph/graph.h"
#include "frontend/ncnn/export_form.h"
#include "kestrel/quantize.h"

namespace kestrel::cli {

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> sorted_entries(const std::string& dir)
{
    std::error_code ec;
    fs::directory_iterator it(dir, ec);
    if (ec) fail(dir, ": cannot read the folder (", ec.message(), ")");
    std::vector<fs::path> entries;
    for (const fs::directory_entry& e : it) entries.push_back(e.path());
    std::sort(entries.begin(), entries.end());
    return entries;
}

// One sample per .npy or picture (a one-input model), or per sub-folder
// holding NAME.npy for each input.
std::vector<CalibrationSample> read_samples(const Args& args, const std::string& dir, const LoadedModel& model)
{
    const std::vector<std::string> inputs = model.net.input_names();
    std::vector<CalibrationSample> samples;
    for (const fs::path& entry : sorted_entries(dir)) {
        const std::string path = entry.string();
        CalibrationSample sample;
        if (fs::is_directory(entry)) {
            for (const std::string& name : inputs) {
                const fs::path file = entry / (name + ".npy");
                if (!fs::exists(file)) fail(path, ": the sample has no ", name, ".npy for input '", name, "'");
                sample[name] = read_npy(file.string());
            }
        } else if (entry.extension() == ".npy" || is_picture_path(path)) {
            if (inputs.size() != 1)
                fail(path, ": the model has ", inputs.size(), " inputs; give each sample as a folder of NAME.npy files");
            sample[inputs[0]] = entry.extension() == ".npy"
                                    ? read_npy(path)
                                    : image_input(args, path, model.net.input_shape(inputs[0]), model.param_path);
        } else {
            continue; // not a sample (a README, a list, ...)
        }
        samples.push_back(std::move(sample));
    }
    if (samples.empty()) fail(dir, ": no samples (.npy files, pictures or folders of NAME.npy)");
    return samples;
}

CalibrationMethod parse_method(const std::string* text)
{
    if (!text || *text == "kl") return CalibrationMethod::KL;
    if (*text == "minmax") return CalibrationMethod::MinMax;
    if (*text == "percentile") return CalibrationMethod::Percentile;
    throw UsageError("--method takes kl, minmax or percentile, not '" + *text + "'");
}

double cosine(const Tensor& a, const Tensor& b)
{
    const Tensor x = a.to(DType::F64), y = b.to(DType::F64);
    double xy = 0, xx = 0, yy = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
        xy += x.data<double>()[i] * y.data<double>()[i];
        xx += x.data<double>()[i] * x.data<double>()[i];
        yy += y.data<double>()[i] * y.data<double>()[i];
    }
    return xx == 0 && yy == 0 ? 1.0 : xy / std::sqrt(xx * yy);
}

// Class scores: one axis of two or more, the others 1.
bool looks_like_scores(const Tensor& t)
{
    const Shape& s = t.shape();
    return t.numel() >= 2 && std::count_if(s.begin(), s.end(), [](int64_t d) { return d != 1; }) == 1;
}

int64_t argmax(const Tensor& t)
{
    const Tensor f = t.to(DType::F32);
    return std::max_element(f.data<float>(), f.data<float>() + f.numel()) - f.data<float>();
}

// Per output: the cosine of the int8 model's output to the float one's
// (mean and least over the samples) and, for class scores, how often the
// best class agrees.
void report_agreement(const Net& float_net, const Net& int8_net, const std::vector<CalibrationSample>& samples,
                      int threads, const char* set_name)
{
    Options o;
    o.threads = threads;
    Session reference(float_net, o), quantized(int8_net, o);
    const std::vector<std::string> outputs = float_net.output_names();
    std::vector<double> sum(outputs.size(), 0), least(outputs.size(), 1);
    std::vector<int> agree(outputs.size(), 0), scores(outputs.size(), 0);
    for (const CalibrationSample& sample : samples) {
        for (const auto& in : sample) reference.set_input(in.first, in.second), quantized.set_input(in.first, in.second);
        const std::vector<Tensor> want = reference.run(outputs), got = quantized.run(outputs);
        for (size_t k = 0; k < outputs.size(); ++k) {
            const double c = cosine(want[k], got[k]);
            sum[k] += c;
            least[k] = std::min(least[k], c);
            if (looks_like_scores(want[k])) ++scores[k], agree[k] += argmax(want[k]) == argmax(got[k]);
        }
    }
    std::printf("agreement with the float model on %zu %s samples:\n", samples.size(), set_name);
    for (size_t k = 0; k < outputs.size(); ++k) {
        std::printf("  %s: cosine mean %.5f, least %.5f", outputs[k].c_str(), sum[k] / double(samples.size()),
                    least[k]);
        if (scores[k] == int(samples.size()))
            std::printf("; top-1 agrees on %d of %d (%.1f%%)", agree[k], scores[k], 100.0 * agree[k] / scores[k]);
        std::printf("\n");
    }
}

// An ONNX model in ncnn's conventions (frontend/ncnn/export_form.h), so that ncnn runs
// the int8 model written from it; false, with a note, when some layer has no
// ncnn form (the model stays in Kestrel's).
bool to_ncnn_form(LoadedModel& model)
{
    try {
        model.net = ncnn_form(model.net);
        return true;
    } catch (const Error& e) {
        std::printf("note: the model stays in Kestrel's form, which ncnn does not run: %s\n", e.what());
        return false;
    }
}

// Samples of a batch of one for the ncnn form, which has no batch axis.
void drop_batch_axis(std::vector<CalibrationSample>& samples)
{
    for (CalibrationSample& sample : samples)
        for (auto& in : sample) {
            const Shape& s = in.second.shape();
            if (!s.empty() && s[0] == 1) in.second = in.second.reshaped(Shape(s.begin() + 1, s.end()));
        }
}

} // namespace

int quantize_command(const std::vector<std::string>& argv)
{
    const Args args = parse_args(argv, {"--calibration", "--method", "--percentile", "--eval", "--threads",
                                        "--weights", "--size", "--mean", "--norm", "--pixel-type", "--resize"},
                                 {"--no-requantize"});
    if (args.positional.size() != 3) throw UsageError("quantize needs MODEL OUT.param OUT.bin");
    if (!args.last("--calibration")) throw UsageError("quantize needs --calibration DIR");
    CalibrationOptions options;
    options.method = parse_method(args.last("--method"));
    if (const std::string* p = args.last("--percentile")) {
        const std::vector<float> v = parse_floats(*p, "--percentile");
        if (v.size() != 1 || !(v[0] > 0 && v[0] <= 100)) throw UsageError("--percentile takes one value in (0, 100]");
        options.percentile = v[0];
    }
    options.threads = args.int_option("--threads", 1, 1, 1024);

    // Residual sums stay layers (int8 convolutions take no residual input).
    LoadedModel model;
    model.onnx = args.onnx_limits();
    LoadOptions lo = model.net.load_options();
    lo.fuse_residuals = false;
    model.net.set_load_options(lo);
    load_model(model, args.positional[0], args.last("--weights"), false);
    std::vector<CalibrationSample> samples = read_samples(args, *args.last("--calibration"), model);
    std::vector<CalibrationSample> eval_samples;
    if (const std::string* eval = args.last("--eval")) eval_samples = read_samples(args, *eval, model);
    if (model.format == ModelFormat::Onnx && to_ncnn_form(model)) drop_batch_axis(samples), drop_batch_axis(eval_samples);

    const std::map<std::string, float> scales = calibrate(model.net, samples, options);
    Net int8_net;
    const int quantized = quantize_net(model.net, scales, int8_net, args.last("--no-requantize") == nullptr);
    int candidates = 0;
    for (size_t li = 0; li < model.net.graph().layers.size(); ++li)
        candidates += quantizable_layer(model.net, static_cast<int>(li));
    int8_net.save_param(args.positional[1]);
    int8_net.save_model(args.positional[2]);
    std::printf("made %d of %d convolution and inner-product layers int8, calibrated on %zu samples\n", quantized,
                candidates, samples.size());
    std::printf("wrote %s and %s\n", args.positional[1].c_str(), args.positional[2].c_str());
    if (!eval_samples.empty())
        report_agreement(model.net, int8_net, eval_samples, options.threads, "evaluation");
    else
        report_agreement(model.net, int8_net, samples, options.threads, "calibration");
    return 0;
}

} // namespace kestrel::cli
