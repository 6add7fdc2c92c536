// Normalizations onto the normalization op's ONNX form, LayerNorm 20=1
// (src/ops/norm/normalization.cpp):
// InstanceNormalization, MeanVarianceNormalization, and the forms of
// LayerNormalization and BatchNormalization that ncnn's layers cannot take
// (runtime weights, the Mean/InvStdDev outputs, any axis); BatchNormalization
// in training mode lowered to the reductions and arithmetic ONNX defines it
// with. Reductions with run-time axes or non-float32 inputs onto Reduction's
// axes-input form (src/ops/reduce/reduction.cpp).
#include "frontend/onnx/converter.h"

namespace kestrel::onnx_import {

namespace {

// The ONNX form's params: 20=1, 21=axes 22=epsilon 23=epsilon outside the root
// 24=affine layout 25=statistics given.
enum Layout { kNumpy = 0, kPerChannel = 1 };

ParamDict normalize_params(const std::vector<int64_t>& axes, float epsilon, int layout)
{
    ParamDict pd = axes.empty() ? ParamDict() : params_with_ints(21, axes, "axis");
    pd.set_int(20, 1);
    pd.set_float(22, epsilon);
    pd.set_int(24, layout);
    return pd;
}

// The inputs that are present, stopping at the first absent one.
std::vector<std::string> present_inputs(NodeContext& n)
{
    std::vector<std::string> inputs;
    for (int i = 0; i < n.num_inputs() && n.has_input(i); ++i) inputs.push_back(n.input(i));
    return inputs;
}

void convert_instance_norm(NodeContext& n)
{
    const int rank = n.input_rank(0);
    n.check(rank == -1 || rank >= 3, "input must be (N, C, D1, ...), got rank ", rank);
    n.check(n.has_input(1) && n.has_input(2), "scale and B are required");
    n.check(rank != -1, "the input rank must be known"); // statistics over the spatial axes 2..rank-1
    std::vector<int64_t> axes;
    for (int64_t a = 2; a < rank; ++a) axes.push_back(a - rank);
    n.emit("LayerNorm", {n.input(0), n.input(1), n.input(2)}, {n.output(0)},
           normalize_params(axes, n.attr_float("epsilon", 1e-5f), kPerChannel));
}

void convert_mean_variance_norm(NodeContext& n)
{
    const std::vector<int64_t> axes = n.has_attr("axes") ? n.attr_ints("axes") : std::vector<int64_t>{0, 2, 3};
    n.check(!axes.empty(), "axes must not be empty");
    // ONNX's function body: (X - mean) / (sqrt(var) + 1e-9).
    ParamDict pd = normalize_params(axes, 1e-9f, kNumpy);
    pd.set_int(23, 1);
    n.emit("LayerNorm", {n.input(0)}, {n.output(0)}, pd);
}

} // namespace

void convert_layer_norm_nd(NodeContext& n)
{
    n.check(n.attr_int("stash_type", 1) == 1, "only stash_type 1 (float statistics) is supported");
    const int rank = n.input_rank(0);
    const int64_t axis = n.attr_int("axis", -1);
    n.check(axis < 0 || rank != -1, "axis ", axis, " needs the input rank, which is unknown");
    n.check(rank == -1 || (axis >= -rank && axis < rank), "axis ", axis, " is out of range for rank ", rank);
    // Axes [axis, rank) counted from the end.
    std::vector<int64_t> axes;
    for (int64_t a = axis < 0 ? axis : axis - rank; a < 0; ++a) axes.push_back(a);
    std::vector<std::string> tops = {n.output(0)};
    if (n.has_output(1) || n.has_output(2)) tops.push_back(n.has_output(1) ? n.output(1) : n.temp("mean"));
    if (n.has_output(2)) tops.push_back(n.output(2));
    n.emit("LayerNorm", present_inputs(n), tops, normalize_params(axes, n.attr_float("epsilon", 1e-5f), kNumpy));
}

void convert_batch_norm_nd(NodeContext& n)
{
    n.check(n.num_inputs() == 5, "expects 5 inputs (X, scale, B, mean, var)");
    for (int i = 0; i < 5; ++i) n.check(n.has_input(i), "input ", i, " is required");
    ParamDict pd = normalize_params({}, n.attr_float("epsilon", 1e-5f), kPerChannel);
    pd.set_int(25, 1); // statistics given as inputs 3 and 4
    n.emit("LayerNorm", present_inputs(n), {n.output(0)}, pd);
}

// BatchNormalization with training_mode=1 (opset 14+), as ONNX's definition
// spells it: Y normalized with the batch's own mean and (population)
// variance over every axis but the channels', then scale and B; the running
// mean and variance outputs the inputs' times momentum plus the batch's
// times 1 - momentum. Lowered to the ops that definition names.
void convert_batch_norm_training(NodeContext& n)
{
    n.check(n.opset() >= 14, "training mode needs opset 14 or later, got ", n.opset());
    const int rank = n.input_rank(0);
    n.check(rank >= 2, "training mode needs the input's rank (>= 2) known");
    std::vector<int64_t> axes = {0};
    for (int64_t a = 2; a < rank; ++a) axes.push_back(a);
    const std::string x = n.input(0);
    const std::string mean = stand_in_value(n, "ReduceMean", {x}, "batch_mean", &axes);
    const std::string centred = stand_in_value(n, "Sub", {x, mean}, "centred");
    const std::string var = stand_in_value(n, "ReduceMean", {stand_in_value(n, "Mul", {centred, centred}, "squares")},
                                           "batch_var", &axes);
    const std::string eps = n.constant_name(scalar_tensor(n.attr_float("epsilon", 1e-5f)), "epsilon");
    const std::string normed =
        stand_in_value(n, "Div", {centred, stand_in_value(n, "Sqrt", {stand_in_value(n, "Add", {var, eps}, "var_eps")}, "std")},
                       "normalized");
    std::vector<int64_t> channel_shape(static_cast<size_t>(rank - 1), 1);
    channel_shape[0] = -1;
    const std::string per_channel = n.constant_name(int64_tensor(channel_shape), "channel_shape");
    const std::string scale = stand_in_value(n, "Reshape", {n.input(1), per_channel}, "scale");
    const std::string bias = stand_in_value(n, "Reshape", {n.input(2), per_channel}, "bias");
    stand_in(n, "Add", {stand_in_value(n, "Mul", {normed, scale}, "scaled"), bias}, {n.output(0)});
    const float momentum = n.attr_float("momentum", 0.9f);
    const std::string keep = n.constant_name(scalar_tensor(momentum), "momentum");
    const std::string take = n.constant_name(scalar_tensor(1.f - momentum), "one_minus_momentum");
    const std::string flat = n.constant_name(int64_tensor({-1}), "flat");
    for (int out = 1; out <= 2; ++out) {
        if (!n.has_output(out)) continue;
        const std::string batch = stand_in_value(n, "Reshape", {out == 1 ? mean : var, flat}, "batch_statistic");
        stand_in(n, "Add",
                 {stand_in_value(n, "Mul", {n.input(2 + out), keep}, "kept"), stand_in_value(n, "Mul", {batch, take}, "taken")},
                 {n.output(out)});
    }
}

void convert_reduce_nd(NodeContext& n, int operation, bool axes_as_input)
{
    const DType* t = n.input_dtype(0);
    n.check(t == nullptr || *t != DType::Bool, "bool reductions are not supported");
    ParamDict pd;
    pd.set_int(0, operation);
    pd.set_int(21, 1); // Reduction's axes-input form
    pd.set_int(4, n.attr_int("keepdims", 1) != 0 ? 1 : 0);
    if (n.attr_int("noop_with_empty_axes", 0) != 0) pd.set_int(22, 1);
    std::vector<std::string> inputs = {n.input(0)};
    if (axes_as_input && n.has_input(1)) {
        inputs.push_back(n.input(1));
        if (!n.constant(1)) pd.set_int(20, 1); // known only at run time
    } else if (!axes_as_input && n.has_attr("axes")) {
        inputs.push_back(constant_blob(n, int64_tensor(n.attr_ints("axes")), "axes"));
    }
    n.emit("Reduction", inputs, {n.output(0)}, pd);
}

std::vector<ConverterEntry> norms_converters()
{
    return {
        {"InstanceNormalization", convert_instance_norm},
        {"MeanVarianceNormalization", convert_mean_variance_norm},
    };
}

} // namespace kestrel::onnx_import
