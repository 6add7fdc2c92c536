// load_tflite / load_tflite_mem (include/kestrel/tflite.h): verify, convert,
// optimize, as the ONNX front-end does.
#include <cstring>
#include <fstream>
#include <vector>

#include "frontend/tflite/converter.h"
#include "kestrel/tflite.h"

namespace kestrel {

bool tflite_supported() { return true; }

void load_tflite_mem(Net& net, const void* data, size_t size, const std::string& source,
                     const TfliteImportOptions& options)
{
    // The verifier checks each field's alignment: bytes from an arbitrary
    // address are read from an aligned copy.
    std::vector<uint64_t> aligned;
    if (reinterpret_cast<uintptr_t>(data) % 16 != 0) {
        aligned.resize((size + 7) / 8 + 1);
        std::memcpy(aligned.data(), data, size);
        data = aligned.data();
    }
    const tflite_import::TfliteFile file(static_cast<const uint8_t*>(data), size, source, options.max_tensor_bytes);
    // The graph keeps the weights while the optimizer rewrites it; dropped after when asked.
    const LoadOptions wanted = net.load_options();
    LoadOptions keep = wanted;
    keep.keep_loaded_weights = true;
    Net fresh;
    fresh.set_load_options(keep);
    tflite_import::ModelConverter(file, fresh).convert();
    fresh.set_source_name(source);
    if (options.optimize) fresh.optimize({});
    if (!wanted.keep_loaded_weights) fresh.release_weights();
    fresh.set_load_options(wanted);
    net = std::move(fresh);
}

void load_tflite(Net& net, const std::string& path, const TfliteImportOptions& options)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    check(static_cast<bool>(in), path, ": cannot open");
    const std::streamoff size = in.tellg();
    check(size >= 0, path, ": cannot read");
    std::vector<uint64_t> bytes((static_cast<size_t>(size) + 7) / 8 + 1); // 8-byte aligned, as the verifier wants
    in.seekg(0);
    check(static_cast<bool>(in.read(reinterpret_cast<char*>(bytes.data()), size)), path, ": cannot read");
    load_tflite_mem(net, bytes.data(), static_cast<size_t>(size), path, options);
}

} // namespace kestrel
