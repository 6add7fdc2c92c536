// ONNX's training optimizers (domain ai.onnx.preview.training): Adagrad,
// Momentum and Adam onto OptimizerStep (src/ops/training/optimizer_step.cpp).
#include "frontend/onnx/converter.h"

namespace kestrel::onnx_import {

namespace {

void emit_step(NodeContext& n, int rule, ParamDict& pd)
{
    pd.set_int(0, rule);
    pd.set_float(1, n.attr_float("norm_coefficient", 0.f));
    std::vector<std::string> bottoms, tops;
    for (int i = 0; i < n.num_inputs(); ++i) bottoms.push_back(n.input(i));
    for (int i = 0; i < n.num_outputs(); ++i) tops.push_back(n.output(i));
    n.emit("OptimizerStep", bottoms, tops, pd);
}

void convert_adagrad(NodeContext& n)
{
    ParamDict pd;
    pd.set_float(2, n.attr_float("epsilon", 1e-6f));
    pd.set_float(3, n.attr_float("decay_factor", 0.f));
    emit_step(n, 0, pd);
}

void convert_momentum(NodeContext& n)
{
    for (const char* required : {"alpha", "beta", "mode", "norm_coefficient"})
        n.check(n.has_attr(required), "needs the '", required, "' attribute");
    const std::string mode = n.attr_string("mode");
    n.check(mode == "standard" || mode == "nesterov", "mode must be 'standard' or 'nesterov', got '", mode, "'");
    ParamDict pd;
    pd.set_float(4, n.attr_float("alpha", 0.f));
    pd.set_float(5, n.attr_float("beta", 0.f));
    emit_step(n, mode == "standard" ? 1 : 2, pd);
}

void convert_adam(NodeContext& n)
{
    ParamDict pd;
    pd.set_float(2, n.attr_float("epsilon", 1e-6f));
    pd.set_float(4, n.attr_float("alpha", 0.9f));
    pd.set_float(5, n.attr_float("beta", 0.999f));
    pd.set_float(6, n.attr_float("norm_coefficient_post", 0.f));
    emit_step(n, 3, pd);
}

} // namespace

std::vector<ConverterEntry> training_converters()
{
    return {
        {"ai.onnx.preview.training.Adagrad", convert_adagrad},
        {"ai.onnx.preview.training.Momentum", convert_momentum},
        {"ai.onnx.preview.training.Adam", convert_adam},
    };
}

} // namespace kestrel::onnx_import
