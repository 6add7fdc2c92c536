// Reductions (ReduceSum, ReduceMean, ...) onto the Reduction layer.
#include <map>

#include "frontend/onnx/converter.h"

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
    // Axes moved from an attribute to an input: ReduceSum at opset 13, the others at 18.
    const bool axes_as_input = n.op_type() == "ReduceSum" ? n.opset() >= 13 : n.opset() >= 18;
    if ((t && *t != DType::F32) || (axes_as_input && n.has_input(1) && !n.constant(1)))
        return convert_reduce_nd(n, reduce_ops().at(n.op_type()), axes_as_input);
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
        ParamDict every_size1_axis;
        every_size1_axis.set_int(21, 1);
        n.emit("Squeeze", {kept}, {n.output(0)}, every_size1_axis);
        return;
    }
    n.emit("Reduction", {n.input(0)}, {n.output(0)}, pd);
}

// Resize (opset 10+) and Upsample (7-9) onto Interp's ONNX form (20=1).
void convert_resize(NodeContext& n)
{
    const bool upsample = n.op_type() == "Upsample";
    const std::string mode = n.attr_string("mode", "nearest");
    ParamDict pd;
    pd.set_int(20, 1);
    pd.set_int(0, mode == "nearest" ? 1 : (mode == "linear" || mode == "bilinear") ? 2 : mode == "cubic" ? 3 : 0);
    n.check(pd.get_int(0, 0) > 0, "unknown mode '", mode, "'");
    // Before opset 11 coordinates were asymmetric and nearest rounding was floor-like.
    const bool legacy = upsample || n.opset() < 11;
    const std::string coord = legacy ? "asymmetric" : n.attr_string("coordinate_transformation_mode", "half_pixel");
    const std::map<std::string, int> coords = {{"half_pixel", 0}, {"pytorch_half_pixel", 1}, {"align_corners", 2},
                                               {"asymmetric", 3}, {"tf_half_pixel_for_nn", 4}, {"tf_crop_and_resize", 5}};
    n.check(coords.count(coord), "coordinate_transformation_mode '", coord, "' is not supported");
    pd.set_int(21, coords.at(coord));
    const std::string nearest = legacy ? "floor" : n.attr_string("nearest_mode", "round_prefer_floor");
    const std::map<std::string, int> nearests = {{"round_prefer_floor", 0}, {"round_prefer_ceil", 1}, {"floor", 2}, {"ceil", 3}};
    n.check(nearests.count(nearest), "nearest_mode '", nearest, "' is not supported");
    pd.set_int(22, nearests.at(nearest));
    pd.set_float(23, n.attr_float("cubic_coeff_a", -0.75f));
    pd.set_int(24, static_cast<int>(n.attr_int("exclude_outside", 0)));
    pd.set_float(26, n.attr_float("extrapolation_value", 0.f));
    n.check(n.attr_int("antialias", 0) == 0, "antialias is not supported");
    n.check(n.attr_ints("axes").empty(), "the axes attribute is not supported");
    n.check(n.attr_string("keep_aspect_ratio_policy", "stretch") == "stretch", "keep_aspect_ratio_policy is not supported");
    std::string target;
    if (upsample && n.opset() < 9) {
        const std::vector<float> scales = n.attr_floats("scales");
        Tensor t({static_cast<int64_t>(scales.size())}, DType::F32);
        std::copy(scales.begin(), scales.end(), t.data<float>());
        target = n.temp("scales");
        ParamDict cpd;
        cpd.set_int(0, static_cast<int>(DType::F32));
        cpd.set_ints(1, {static_cast<int>(scales.size())});
        n.emit("Constant", {}, {target}, cpd, {t});
    } else {
        // Resize-10 and Upsample-9: (X, scales); Resize-11+: (X, roi, scales, sizes).
        const int scales_at = upsample || n.opset() < 11 ? 1 : 2;
        const bool has_sizes = !upsample && n.opset() >= 11 && n.has_input(3);
        const Tensor* scales = n.constant(scales_at);
        n.check(!(has_sizes && n.has_input(scales_at) && !scales),
                "scales and sizes are both given and scales is not a constant: cannot tell which applies");
        const bool use_sizes = has_sizes && !(scales && scales->numel() > 0);
        pd.set_int(25, use_sizes ? 1 : 0);
        const int target_at = use_sizes ? 3 : scales_at;
        // A target known only at run time: the layer shapes its output then.
        if (!n.constant(target_at)) pd.set_int(27, 1);
        target = n.input(target_at);
    }
    std::vector<std::string> inputs = {n.input(0), target};
    if (coord == "tf_crop_and_resize") {
        n.check(n.has_input(1), "tf_crop_and_resize needs the roi input");
        inputs.push_back(n.input(1));
    }
    n.emit("Interp", inputs, {n.output(0)}, pd);
}

} // namespace

std::vector<ConverterEntry> extra_converters()
{
    std::vector<ConverterEntry> v = {{"Resize", convert_resize}, {"Upsample", convert_resize}};
    for (const auto& kv : reduce_ops()) v.push_back({kv.first.c_str(), convert_reduce});
    return v;
}

} // namespace kestrel::onnx_import
