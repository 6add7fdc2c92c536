// The pool family. Pooling: ncnn's Pooling, Pooling1D, Pooling3D (max/avg, global, adaptive, its pad modes) and
// ONNX's MaxPool/AveragePool/MaxUnpool of any rank; ncnn's SPP (pyramid pooling).
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_pooling();
std::unique_ptr<Op> make_pooling1d();
std::unique_ptr<Op> make_pooling3d();
std::unique_ptr<Op> make_spp();
std::unique_ptr<Op> make_max_unpool();

std::vector<BuiltinOp> pool_family()
{
    return {
        {"Pooling", make_pooling},
        {"Pooling1D", make_pooling1d},
        {"Pooling3D", make_pooling3d},
        {"SPP", make_spp},
        {"MaxUnpool", make_max_unpool},
    };
}

} // namespace kestrel
