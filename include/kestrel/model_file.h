// One entry point for a model file of any format Kestrel reads: the format is
// told from the file's content (its extension only breaks ties), and the
// matching front-end (src/frontend/<format>/) turns it into a Net. The
// `kestrel` command, the Python module and the C API all load through it.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include "kestrel/net.h"

namespace kestrel {

enum class ModelFormat {
    Unknown,
    NcnnParam,    // ncnn's .param text (first line 7767517)
    NcnnParamBin, // ncnn's binary .param.bin (magic 7767517)
    Onnx,         // an ONNX ModelProto
    Tflite,       // a TensorFlow Lite flatbuffer ("TFL3")
    CaffeText,    // a Caffe deploy.prototxt (NetParameter as text)
    CaffeBinary,  // a Caffe .caffemodel (NetParameter, binary: weights)
    TensorflowGraphDef, // a frozen TensorFlow GraphDef (.pb)
    TensorflowText,     // a GraphDef as text (.pbtxt)
};

// "ncnn .param", "ONNX", ... for messages.
const char* model_format_name(ModelFormat format);
// The format of the bytes a model file starts with (a few hundred are enough).
ModelFormat detect_model_format(const void* data, size_t size);
// The format of a file: its first bytes; the extension only when they match
// no format (an empty or broken file goes to its extension's parser, which
// says what is wrong) or cannot tell two apart. Throws when it cannot be read.
ModelFormat detect_model_format(const std::string& path);

struct ModelFileOptions {
    // Where the weights are when the format keeps them apart (ncnn .bin);
    // empty: beside the model (X.param -> X.bin).
    std::string weights;
    // Structure only (benchmarks, `kestrel info`): all-zero weights when the
    // weights file is missing.
    bool zero_weights_if_missing = false;
    // Graph optimizer passes (ncnn models: only the fusions that keep ncnn's bits).
    bool optimize = true;
};

// What load_model_file read.
struct ModelFileInfo {
    ModelFormat format = ModelFormat::Unknown;
    std::string weights; // the file the weights came from; empty when none were needed or they are zeros
};

// Replaces whatever `net` held with the model in `path`, read by the
// front-end of its format. Throws kestrel::Error naming the file and the
// format when no front-end of this build reads it.
ModelFileInfo load_model_file(Net& net, const std::string& path, const ModelFileOptions& options = {});

// Front-ends that live outside the core library (ONNX: kestrel_onnx, which
// links protobuf) register their loader here; a later registration replaces
// an earlier one.
// A loader returns the file its weights came from.
using ModelLoader = std::function<std::string(Net& net, const std::string& path, const ModelFileOptions& options)>;
void register_model_loader(ModelFormat format, ModelLoader loader);

} // namespace kestrel
