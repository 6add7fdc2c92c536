// The reduce family. Reductions over axes: ncnn's Reduction and ONNX's Reduce* (ReduceND),
// arg max/min, TopK, CumSum, Unique, NonZero.
#include "ops/registry.h"

namespace kestrel {

std::unique_ptr<Op> make_nd_unique();
std::unique_ptr<Op> make_reduction();
std::unique_ptr<Op> make_nd_cumsum();
std::unique_ptr<Op> make_nd_nonzero();
std::unique_ptr<Op> make_nd_topk();
std::unique_ptr<Op> make_argmax();
std::unique_ptr<Op> make_argmin();

std::vector<BuiltinOp> reduce_family()
{
    return {
        {"Unique", make_nd_unique},
        {"Reduction", make_reduction},
        {"CumSum", make_nd_cumsum},
        {"NonZero", make_nd_nonzero},
        {"TopK", make_nd_topk},
        {"ArgMax", make_argmax},
        {"ArgMin", make_argmin},
    };
}

} // namespace kestrel
