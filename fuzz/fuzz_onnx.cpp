// The ONNX importer (protobuf parse, checker, converters), then a bounded run.
#include "fuzz_util.h"
#include "kestrel/onnx.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace kestrel;
    try {
        Net net;
        load_onnx_mem(net, data, size, "<fuzz>", "/nonexistent");
        fuzz::run_small(net, {1, 3, 8, 8});
    } catch (const Error&) {
    } catch (const std::exception&) {
        // protobuf/onnx may throw their own exceptions on malformed input; the importer wraps
        // what it knows, anything else still must not crash.
    }
    return 0;
}
