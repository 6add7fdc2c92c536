// Whole-model execution of small fuzzed graphs: .param text with zero weights,
// run on a small input when its cost is bounded.
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace kestrel;
    try {
        Net net;
        net.set_max_weight_bytes(fuzz::kMaxBytes);
        net.load_param_mem(std::string(reinterpret_cast<const char*>(data), size));
        net.load_model_zeros();
        fuzz::run_small(net, {3, 7, 9});
    } catch (const Error&) {
    }
    return 0;
}
