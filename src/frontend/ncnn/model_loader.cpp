#include "frontend/ncnn/model_loader.h"

#include <fstream>

namespace kestrel {

namespace {

bool file_exists(const std::string& path) { return std::ifstream(path).good(); }

// X.param -> X.bin, X.param.bin -> X.bin, otherwise the path plus .bin.
std::string weights_beside(const std::string& path)
{
    for (const std::string suffix : {".param.bin", ".param"})
        if (path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
            return path.substr(0, path.size() - suffix.size()) + ".bin";
    return path + ".bin";
}

} // namespace

std::string load_ncnn_model(Net& net, const std::string& path, ModelFormat format, const ModelFileOptions& options)
{
    // ncnn models keep ncnn's bits: only the exact fusions.
    LoadOptions lo = net.load_options();
    lo.fuse_layers = options.optimize;
    net.set_load_options(lo);
    if (format == ModelFormat::NcnnParamBin) net.load_param_bin(path);
    else net.load_param(path);
    if (!options.weights.empty()) {
        net.load_model(options.weights);
        return options.weights;
    }
    const std::string beside = weights_beside(path);
    if (file_exists(beside)) {
        net.load_model(beside);
        return beside;
    }
    if (net.needs_weights()) {
        check(options.zero_weights_if_missing, beside,
              ": cannot open weights (the model has weights; name their file: kestrel --weights FILE)");
        net.load_model_zeros();
    }
    return "";
}

} // namespace kestrel
