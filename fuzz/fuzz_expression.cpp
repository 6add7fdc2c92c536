// The shape-expression parser and evaluator (Reshape 6=, Crop 19-21, Interp 9=).
#include "fuzz_util.h"
#include "ops/common/expression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace kestrel;
    try {
        const Expression e = Expression::parse(std::string(reinterpret_cast<const char*>(data), size));
        const std::vector<Shape> shapes = {{3, 224, 224}, {2, 5}, {7}, {1, 2, 3, 4}, {}, {6, 1, 2, 3, 4}, {9, 9, 9}, {1}, {4, 4}, {2, 2, 2}};
        e.eval_list(shapes);
    } catch (const Error&) {
    }
    return 0;
}
