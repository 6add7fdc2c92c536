// The .param text parser, then (when it loads) the model with zero weights.
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace kestrel;
    try {
        Net net;
        net.set_max_weight_bytes(fuzz::kMaxBytes);
        net.load_param_mem(std::string(reinterpret_cast<const char*>(data), size));
        net.param_text(); // the writer must handle whatever the parser accepted
    } catch (const Error&) {
    }
    return 0;
}
