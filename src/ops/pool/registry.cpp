// The pool family. Pooling: ncnn's Pooling (max/avg, global, adaptive, its pad modes) and
// ONNX's MaxPool/AveragePool/MaxUnpool of any rank.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_pooling();
std::unique_ptr<Op> make_max_unpool();

std::vector<BuiltinOp> pool_family()
{
    return {
        {"Pooling", make_pooling},
        {"MaxUnpool", make_max_unpool},
    };
}

} // namespace kestrel
