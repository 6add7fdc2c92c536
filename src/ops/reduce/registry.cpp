// The reduce family. Reductions over axes: ncnn's Reduction and ONNX's Reduce* (Reduction 21=1),
// arg max/min, TopK, CumSum (ncnn's CumulativeSum), StatisticsPooling, Unique, NonZero.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_unique();
std::unique_ptr<Op> make_reduction();
std::unique_ptr<Op> make_cumsum();
std::unique_ptr<Op> make_cumulative_sum();
std::unique_ptr<Op> make_statistics_pooling();
std::unique_ptr<Op> make_nonzero();
std::unique_ptr<Op> make_topk();
std::unique_ptr<Op> make_argmax();
std::unique_ptr<Op> make_argmin();

std::vector<BuiltinOp> reduce_family()
{
    return {
        {"Unique", make_unique},
        {"Reduction", make_reduction},
        {"CumSum", make_cumsum},
        {"CumulativeSum", make_cumulative_sum},
        {"StatisticsPooling", make_statistics_pooling},
        {"NonZero", make_nonzero},
        {"TopK", make_topk},
        {"ArgMax", make_argmax},
        {"ArgMin", make_argmin},
    };
}

} // namespace kestrel
