// The TensorFlow Lite reader (flatbuffer verifier, tensor and buffer checks,
// sparse densifying, the operator converters), then a bounded run.
#include "fuzz_util.h"
#include "kestrel/tflite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace kestrel;
    try {
        Net net;
        TfliteImportOptions options;
        options.max_tensor_bytes = fuzz::kMaxBytes;
        load_tflite_mem(net, data, size, "<fuzz>", options);
        fuzz::run_small(net, {1, 8, 8, 3});
    } catch (const Error&) {
    }
    return 0;
}
