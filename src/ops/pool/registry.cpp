// The pool family. Pooling: ncnn's Pooling (max/avg, global, adaptive, its pad modes) and
// ONNX's MaxPool/AveragePool/MaxUnpool of any rank.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_pooling();
std::unique_ptr<Op> make_nd_max_pool();
std::unique_ptr<Op> make_nd_average_pool();
std::unique_ptr<Op> make_nd_max_unpool();

std::vector<BuiltinOp> pool_family()
{
    return {
        {"Pooling", make_pooling},
        {"MaxPool", make_nd_max_pool},
        {"AveragePool", make_nd_average_pool},
        {"MaxUnpool", make_nd_max_unpool},
    };
}

} // namespace kestrel
