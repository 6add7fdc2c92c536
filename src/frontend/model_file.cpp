// The one entry point for model files (include/kestrel/model_file.h): the
// format from the content, then its front-end. The ncnn front-end is built
// in; front-ends with dependencies of their own (ONNX) register a loader.
#include <map>
#include <mutex>

#include "frontend/ncnn/model_loader.h"
#include "kestrel/model_file.h"
#include "kestrel/tflite.h"

namespace kestrel {

namespace {

struct Loaders {
    std::mutex mutex;
    std::map<ModelFormat, ModelLoader> loaders;
};

Loaders& loaders()
{
    static Loaders l;
    return l;
}

ModelLoader loader_for(ModelFormat format)
{
    if (format == ModelFormat::NcnnParam || format == ModelFormat::NcnnParamBin)
        return [format](Net& net, const std::string& path, const ModelFileOptions& options) {
            return load_ncnn_model(net, path, format, options);
        };
    if (format == ModelFormat::Tflite && tflite_supported())
        return [](Net& net, const std::string& path, const ModelFileOptions& options) {
            check(options.weights.empty(), path, ": a TensorFlow Lite model keeps its weights inside");
            TfliteImportOptions o;
            o.optimize = options.optimize;
            load_tflite(net, path, o);
            return path;
        };
    Loaders& l = loaders();
    std::lock_guard<std::mutex> lock(l.mutex);
    const auto it = l.loaders.find(format);
    return it == l.loaders.end() ? ModelLoader() : it->second;
}

} // namespace

void register_model_loader(ModelFormat format, ModelLoader loader)
{
    Loaders& l = loaders();
    std::lock_guard<std::mutex> lock(l.mutex);
    l.loaders[format] = std::move(loader);
}

ModelFileInfo load_model_file(Net& net, const std::string& path, const ModelFileOptions& options)
{
    const ModelFormat format = detect_model_format(path);
    check(format != ModelFormat::Unknown, path,
          ": not a model file Kestrel reads (ncnn .param/.param.bin, ONNX, TensorFlow Lite; told from the file's first bytes)");
    check(format != ModelFormat::CaffeBinary, path,
          ": a Caffe .caffemodel holds weights only: load its deploy.prototxt with the weights named");
    const ModelLoader load = loader_for(format);
    check(static_cast<bool>(load), path, ": a ", model_format_name(format), " model, which this build has no front-end for",
          format == ModelFormat::Onnx ? " (the ONNX one is library kestrel_onnx: link it and call register_onnx_loader())"
                                      : "");
    ModelFileInfo info;
    info.format = format;
    info.weights = load(net, path, options);
    return info;
}

#ifndef KESTREL_HAVE_TFLITE
// Built without flatbuffers' headers: the format is told, and refused by name.
bool tflite_supported() { return false; }
void load_tflite(Net&, const std::string& path, const TfliteImportOptions&)
{
    fail(path, ": this build of Kestrel has no TensorFlow Lite front-end (it needs libflatbuffers-dev and flatc)");
}
void load_tflite_mem(Net&, const void*, size_t, const std::string& source, const TfliteImportOptions&)
{
    fail(source, ": this build of Kestrel has no TensorFlow Lite front-end (it needs libflatbuffers-dev and flatc)");
}
#endif

} // namespace kestrel
