// ONNX-semantics normalization and reduction layers (src/ops/nd_normalize.cpp,
// src/ops/nd_reduce.cpp), used by the ONNX importer.
#include "ops/builtin_ops.h"

namespace kestrel {

std::unique_ptr<Op> make_nd_normalize();
std::unique_ptr<Op> make_nd_reduce();

std::vector<BuiltinOp> norms_ops()
{
    return {
        {"NormalizeND", make_nd_normalize},
        {"ReduceND", make_nd_reduce},
    };
}

} // namespace kestrel
