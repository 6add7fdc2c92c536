// Reductions (ReduceSum, ReduceMean, ...) onto the Reduction layer.
#include <map>

#include "onnx/converter.h"

namespace kestrel::onnx_import {

namespace {

// ONNX op type -> Reduction operation code.
const std::map<std::string, int>& reduce_ops()
{
    static const std::map<std::string, int> ops = {
        {"ReduceSum", 0},  {"ReduceL1", 7},     {"ReduceSumSquare", 2}, {"ReduceMean", 3},       {"ReduceMax", 4},
        {"ReduceMin", 5},  {"ReduceProd", 6},   {"ReduceL2", 8},        {"ReduceLogSum", 9},     {"ReduceLogSumExp", 10},
    };
    return ops;
}

void convert_reduce(NodeContext& n)
{
    const DType* t = n.input_dtype(0);
    n.check(t == nullptr || *t == DType::F32, "only float32 reductions are supported");
    // Axes moved from an attribute to an input: ReduceSum at opset 13, the others at 18.
    const bool axes_as_input = n.op_type() == "ReduceSum" ? n.opset() >= 13 : n.opset() >= 18;
    std::vector<int64_t> axes;
    if (axes_as_input && n.has_input(1)) {
        const Tensor* c = n.constant(1);
        n.check(c != nullptr, "axes must be a constant");
        axes = tensor_to_int64s(*c);
    } else if (!axes_as_input) {
        axes = n.attr_ints("axes");
    }
    const bool keepdims = n.attr_int("keepdims", 1) != 0;
    if (axes.empty() && n.attr_int("noop_with_empty_axes", 0) != 0) {
        n.emit("Noop", {n.input(0)}, {n.output(0)});
        return;
    }
    const int rank = n.input_rank(0);
    const bool reduces_all = axes.empty() || (rank > 0 && static_cast<int>(axes.size()) == rank);
    ParamDict pd = params_with_ints(3, axes, "axis");
    if (axes.empty()) pd = ParamDict();
    pd.set_int(0, reduce_ops().at(n.op_type()));
    pd.set_int(1, axes.empty() ? 1 : 0);
    pd.set_int(5, 1);
    // Reducing every axis without keepdims gives a scalar: keep the dims, then squeeze them all.
    pd.set_int(4, keepdims || reduces_all ? 1 : 0);
    if (reduces_all && !keepdims) {
        const std::string kept = n.temp("kept");
        n.emit("Reduction", {n.input(0)}, {kept}, pd);
        n.emit("SqueezeND", {kept}, {n.output(0)});
        return;
    }
    n.emit("Reduction", {n.input(0)}, {n.output(0)}, pd);
}

} // namespace

std::vector<ConverterEntry> extra_converters()
{
    std::vector<ConverterEntry> v;
    for (const auto& kv : reduce_ops()) v.push_back({kv.first.c_str(), convert_reduce});
    return v;
}

} // namespace kestrel::onnx_import
