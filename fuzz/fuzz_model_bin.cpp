// .bin weight loading (every ModelBin tag) against a fixed .param whose layers
// read tagged and raw weights; a model that loads is also run.
#include "fuzz_util.h"

namespace {
const char* kParam = R"(7767517
7 7
Input          in    0 1 x 0=8 1=8 2=3
Convolution    conv  1 1 x c 0=4 1=3 4=1 5=1 6=108
ConvolutionDepthWise dw 1 1 c d 0=4 1=3 4=1 5=1 6=36 7=4
BatchNorm      bn    1 1 d b 0=4
Pooling        pool  1 1 b p 0=1 4=1
InnerProduct   fc    1 1 p f 0=5 1=1 2=20
Softmax        prob  1 1 f y
)";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace kestrel;
    try {
        Net net;
        net.set_max_weight_bytes(fuzz::kMaxBytes);
        net.load_param_mem(kParam);
        net.load_model_mem(data, size);
        fuzz::run_small(net, {3, 8, 8});
    } catch (const Error&) {
    }
    return 0;
}
