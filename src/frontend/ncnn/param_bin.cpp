// The binary .param.bin form (ncnn2mem): little-endian int32 words, layer
// types as indices into ncnn's layer registry, blobs as indices (no names).
#include <cstring>

#include "frontend/ncnn/param.h"
#include "kestrel/error.h"

namespace kestrel {

namespace {

// ncnn's registration order (src/CMakeLists.txt); a type index is a position here.
const char* const kLayerTypes[] = {
    "AbsVal", "ArgMax", "BatchNorm", "Bias", "BNLL", "Concat", "Convolution", "Crop", "Deconvolution", "Dropout",
    "Eltwise", "ELU", "Embed", "Exp", "Flatten", "InnerProduct", "Input", "Log", "LRN", "MemoryData", "MVN",
    "Pooling", "Power", "PReLU", "Proposal", "Reduction", "ReLU", "Reshape", "ROIPooling", "Scale", "Sigmoid",
    "Slice", "Softmax", "Split", "SPP", "TanH", "Threshold", "Tile", "RNN", "LSTM", "BinaryOp", "UnaryOp",
    "ConvolutionDepthWise", "Padding", "Squeeze", "ExpandDims", "Normalize", "Permute", "PriorBox",
    "DetectionOutput", "Interp", "DeconvolutionDepthWise", "ShuffleChannel", "InstanceNorm", "Clip", "Reorg",
    "YoloDetectionOutput", "Quantize", "Dequantize", "Yolov3DetectionOutput", "PSROIPooling", "ROIAlign",
    "Packing", "Requantize", "Cast", "HardSigmoid", "SELU", "HardSwish", "Noop", "PixelShuffle", "DeepCopy",
    "Mish", "StatisticsPooling", "Swish", "Gemm", "GroupNorm", "LayerNorm", "Softplus", "GRU",
    "MultiHeadAttention", "GELU", "Convolution1D", "Pooling1D", "ConvolutionDepthWise1D", "Convolution3D",
    "ConvolutionDepthWise3D", "Pooling3D", "MatMul", "Deconvolution1D", "DeconvolutionDepthWise1D",
    "Deconvolution3D", "DeconvolutionDepthWise3D", "Einsum", "DeformableConv2D", "GLU", "Fold", "Unfold",
    "GridSample", "CumulativeSum", "CopyTo", "Erf", "Diag", "CELU", "Shrink", "RMSNorm", "Spectrogram",
    "InverseSpectrogram", "Flip", "SDPA", "RotaryEmbed"};

constexpr int kMagic = 7767517;
constexpr int kMaxCount = 1 << 20;

class WordReader {
public:
    WordReader(const void* data, size_t size, const std::string& source)
        : p_(static_cast<const uint8_t*>(data)), size_(size), source_(source)
    {
    }
    int32_t next(const char* what)
    {
        if (size_ - pos_ < 4)
            fail(source_, ": unexpected end of file at byte ", pos_, " reading ", what);
        int32_t v;
        std::memcpy(&v, p_ + pos_, 4); // the format is little-endian, as is every target we build for
        pos_ += 4;
        return v;
    }
    int32_t next_in(const char* what, int32_t lo, int32_t hi)
    {
        const size_t at = pos_;
        const int32_t v = next(what);
        if (v < lo || v > hi) fail(source_, ": byte ", at, ": ", what, " ", v, " out of range [", lo, ", ", hi, "]");
        return v;
    }
    const uint8_t* bytes(size_t n, const char* what)
    {
        const size_t padded = (n + 3) / 4 * 4; // strings are padded to 4 bytes
        if (size_ - pos_ < padded) fail(source_, ": unexpected end of file at byte ", pos_, " reading ", what);
        const uint8_t* q = p_ + pos_;
        pos_ += padded;
        return q;
    }
    size_t pos() const { return pos_; }
    size_t size() const { return size_; }

private:
    const uint8_t* p_;
    size_t size_;
    size_t pos_ = 0;
    std::string source_;
};

void read_params(WordReader& r, Layer& layer, const std::string& where)
{
    for (;;) {
        const int32_t key = r.next("param id");
        if (key == -233) return;
        if (key <= -23400) { // string
            const int64_t id = -int64_t{key} - 23400; // 64-bit: the key may be INT32_MIN
            if (id >= ParamDict::kMaxId) fail(where, "string param id ", id, " out of range");
            const int32_t len = r.next_in("string length", 0, 255);
            const uint8_t* s = r.bytes(static_cast<size_t>(len), "string param");
            layer.params.set_string(static_cast<int>(id), std::string(reinterpret_cast<const char*>(s), static_cast<size_t>(len)));
        } else if (key <= -23300) { // array of raw words
            const int64_t id = -int64_t{key} - 23300;
            if (id >= ParamDict::kMaxId) fail(where, "array param id ", id, " out of range");
            const int32_t len = r.next_in("array length", 0, kMaxCount);
            std::vector<uint32_t> words(static_cast<size_t>(len));
            for (auto& w : words) w = static_cast<uint32_t>(r.next("array element"));
            layer.params.set_raw_array(static_cast<int>(id), std::move(words));
        } else {
            if (key < 0 || key >= ParamDict::kMaxId) fail(where, "param id ", key, " out of range 0..31");
            layer.params.set_raw_scalar(key, static_cast<uint32_t>(r.next("param value")));
        }
    }
}

} // namespace

const char* ncnn_layer_type_name(int type_index)
{
    const int n = static_cast<int>(sizeof kLayerTypes / sizeof kLayerTypes[0]);
    return type_index >= 0 && type_index < n ? kLayerTypes[type_index] : nullptr;
}

Graph parse_ncnn_param_bin(const void* data, size_t size, const std::string& source)
{
    WordReader r(data, size, source);
    if (r.next("magic") != kMagic) fail(source, ": not an ncnn .param.bin file (bad magic)");
    const int layer_count = r.next_in("layer count", 1, kMaxCount);
    const int blob_count = r.next_in("blob count", 1, kMaxCount);
    // Check the counts against the file size before allocating for them: a
    // layer takes at least 4 words (type, bottom count, top count, end of
    // params) and every blob is some layer's top (one word each).
    const size_t words_left = (r.size() - r.pos()) / 4;
    if (static_cast<size_t>(layer_count) > words_left / 4)
        fail(source, ": layer count ", layer_count, " cannot fit in the ", words_left * 4, " bytes left");
    if (static_cast<size_t>(blob_count) > words_left)
        fail(source, ": blob count ", blob_count, " cannot fit in the ", words_left * 4, " bytes left");
    Graph g;
    g.source = source;
    g.blobs.resize(static_cast<size_t>(blob_count));
    for (int i = 0; i < blob_count; ++i) {
        g.blobs[i].name = std::to_string(i);
        g.blob_index[g.blobs[i].name] = i;
    }
    for (int li = 0; li < layer_count; ++li) {
        Layer layer;
        const int32_t type_index = r.next("layer type index");
        const char* type = ncnn_layer_type_name(type_index);
        if (type == nullptr)
            fail(source, ": layer ", li, ": unknown layer type index ", type_index,
                 (type_index & 256) ? " (custom layers cannot be named in .param.bin)" : "");
        layer.type = type;
        layer.name = "layer" + std::to_string(li);
        const int nbottom = r.next_in("bottom count", 0, 4096);
        const int ntop = r.next_in("top count", 0, 4096);
        for (int i = 0; i < nbottom; ++i) layer.bottoms.push_back(r.next_in("bottom blob index", 0, blob_count - 1));
        for (int i = 0; i < ntop; ++i) layer.tops.push_back(r.next_in("top blob index", 0, blob_count - 1));
        read_params(r, layer, source + ": " + layer.type + " '" + layer.name + "': ");
        g.layers.push_back(std::move(layer));
    }
    if (r.pos() != r.size()) fail(source, ": ", r.size() - r.pos(), " unexpected bytes after the last layer");
    g.finalize();
    return g;
}

} // namespace kestrel
