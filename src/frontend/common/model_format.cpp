// Telling a model file's format from its first bytes (include/kestrel/model_file.h).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "kestrel/error.h"
#include "kestrel/model_file.h"

namespace kestrel {

namespace {

constexpr int32_t kNcnnMagic = 7767517;

// A protobuf varint at p (advancing it), or false past the end / over 10 bytes.
bool read_varint(const uint8_t*& p, const uint8_t* end, uint64_t& value)
{
    value = 0;
    for (int shift = 0; shift < 70 && p < end; shift += 7) {
        const uint8_t b = *p++;
        value |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

// The first field of a protobuf message: its number and wire type, and for a
// length-delimited one where its payload starts and how long it is.
struct Field {
    uint64_t number = 0;
    int wire = -1;
    const uint8_t* payload = nullptr;
    uint64_t length = 0;
};

bool first_field(const uint8_t* p, const uint8_t* end, Field& f)
{
    uint64_t tag = 0;
    if (!read_varint(p, end, tag) || tag >> 3 == 0) return false;
    f.number = tag >> 3;
    f.wire = static_cast<int>(tag & 7);
    if (f.wire != 2) return f.wire == 0 || f.wire == 1 || f.wire == 5;
    if (!read_varint(p, end, f.length)) return false;
    f.payload = p;
    return true;
}

bool printable(const uint8_t* p, size_t n)
{
    return std::all_of(p, p + n, [](uint8_t c) { return c >= 0x20 && c < 0x7f; });
}

// A binary protobuf by its first field: ONNX writes ir_version (field 1, a
// varint) first; a GraphDef starts with its nodes (field 1, messages whose
// own first field is the node's name), a Caffe NetParameter with its name
// (field 1, text) or its layers (fields 2 and 100).
ModelFormat protobuf_format(const uint8_t* data, size_t size)
{
    const uint8_t* end = data + size;
    Field f;
    if (!first_field(data, end, f)) return ModelFormat::Unknown;
    if (f.number == 1 && f.wire == 0) return ModelFormat::Onnx;
    if (f.wire != 2) return ModelFormat::Unknown;
    if (f.number == 100 || f.number == 2) return ModelFormat::CaffeBinary;
    if (f.number == 4) return ModelFormat::TensorflowGraphDef; // versions only: an empty graph
    if (f.number != 1) return ModelFormat::Unknown;
    const uint8_t* inner_end = f.payload + std::min<uint64_t>(f.length, static_cast<uint64_t>(end - f.payload));
    Field node;
    if (first_field(f.payload, inner_end, node) && node.number == 1 && node.wire == 2 && f.length > 2 &&
        !printable(f.payload, static_cast<size_t>(inner_end - f.payload)))
        return ModelFormat::TensorflowGraphDef;
    return ModelFormat::CaffeBinary;
}

// Text formats by their first word: ncnn's magic line, a GraphDef's `node {`,
// a Caffe prototxt's `name:`, `input:`, `layer {` or `layers {`.
ModelFormat text_format(const std::string& text)
{
    size_t i = 0;
    for (;;) { // skip blank and comment lines
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
        if (i < text.size() && text[i] == '#') {
            while (i < text.size() && text[i] != '\n') ++i;
            continue;
        }
        break;
    }
    size_t j = i;
    while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
    const std::string word = text.substr(i, j - i);
    if (word == "7767517") return ModelFormat::NcnnParam;
    if (word == "node" || word == "versions" || word == "library") return ModelFormat::TensorflowText;
    if (word == "name" || word == "input" || word == "layer" || word == "layers" || word == "input_shape" ||
        word == "input_dim" || word == "force_backward" || word == "state")
        return ModelFormat::CaffeText;
    return ModelFormat::Unknown;
}

bool ends_with(const std::string& s, const char* suffix)
{
    const size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

} // namespace

const char* model_format_name(ModelFormat format)
{
    switch (format) {
    case ModelFormat::NcnnParam: return "ncnn .param";
    case ModelFormat::NcnnParamBin: return "ncnn .param.bin";
    case ModelFormat::Onnx: return "ONNX";
    case ModelFormat::Tflite: return "TensorFlow Lite";
    case ModelFormat::CaffeText: return "Caffe prototxt";
    case ModelFormat::CaffeBinary: return "Caffe .caffemodel";
    case ModelFormat::TensorflowGraphDef: return "TensorFlow GraphDef";
    case ModelFormat::TensorflowText: return "TensorFlow GraphDef text";
    case ModelFormat::Unknown: break;
    }
    return "unknown";
}

ModelFormat detect_model_format(const void* data, size_t size)
{
    const auto* bytes = static_cast<const uint8_t*>(data);
    if (size >= 8 && std::memcmp(bytes + 4, "TFL3", 4) == 0) return ModelFormat::Tflite;
    int32_t magic = 0;
    if (size >= 4) std::memcpy(&magic, bytes, 4);
    if (magic == kNcnnMagic) return ModelFormat::NcnnParamBin;
    const size_t head = std::min<size_t>(size, 4096);
    if (head > 0 && std::all_of(bytes, bytes + head, [](uint8_t c) { return c >= 0x20 || c == '\n' || c == '\r' || c == '\t'; }))
        return text_format(std::string(reinterpret_cast<const char*>(bytes), head));
    return protobuf_format(bytes, size);
}

ModelFormat detect_model_format(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    check(static_cast<bool>(in), path, ": cannot open model file");
    std::string head(4096, '\0');
    in.read(&head[0], static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    const ModelFormat format = detect_model_format(head.data(), head.size());
    // A tie the content cannot break: a binary protobuf whose first field
    // could be either (a Caffe net named by a non-text string).
    if (format == ModelFormat::CaffeBinary && ends_with(path, ".pb")) return ModelFormat::TensorflowGraphDef;
    if (format != ModelFormat::Unknown) return format;
    // Content no format starts with (an empty file, a broken header): the
    // extension's front-end, whose parser says what is wrong with it.
    static const std::pair<const char*, ModelFormat> kExtensions[] = {
        {".param.bin", ModelFormat::NcnnParamBin}, {".param", ModelFormat::NcnnParam}, {".onnx", ModelFormat::Onnx},
        {".tflite", ModelFormat::Tflite},         {".prototxt", ModelFormat::CaffeText}, {".pb", ModelFormat::TensorflowGraphDef}};
    for (const auto& [suffix, by_name] : kExtensions)
        if (ends_with(path, suffix)) return by_name;
    return ModelFormat::Unknown;
}

} // namespace kestrel
