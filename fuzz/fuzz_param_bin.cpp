// The binary .param.bin parser.
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace kestrel;
    try {
        Net net;
        net.load_param_bin_mem(data, size);
        net.param_text();
    } catch (const Error&) {
    }
    return 0;
}
