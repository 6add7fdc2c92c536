// Tensor and shape operators: Shape, Reshape, Transpose, Gather/Scatter,
// Slice, Split, Concat, Expand, Tile, Pad, Cast, TopK, ... onto our layers
// in their ONNX forms (src/ops/shape/ and others; any rank and dtype).
//
// Values that later opsets pass as inputs (axes, starts, pads, k, split, ...)
// are always inputs of our layers; for the older opsets that had attributes,
// the converter emits them as Constant layers. When such a value is not a
// constant at conversion time, the layer gets 20=dynamic=1: it still folds the
// value when the runtime knows it while planning (shape arithmetic), and
// otherwise computes its output shape at run time.
#include <algorithm>
#include <climits>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/onnx_tensor.h"

namespace kestrel::onnx_import {

namespace {

constexpr int kDynamicParam = 20;

int clamp_to_int(int64_t v) { return static_cast<int>(std::clamp<int64_t>(v, INT_MIN, INT_MAX)); }

} // namespace

// Emits a Constant layer holding `t`; returns its blob.
std::string constant_blob(NodeContext& n, const Tensor& t, const std::string& what)
{
    const std::string name = n.temp(what);
    ParamDict pd;
    pd.set_int(0, static_cast<int>(t.dtype()));
    std::vector<int> dims;
    for (int64_t d : t.shape()) {
        n.check(d <= INT_MAX, "constant ", what, " has a dimension over 2^31");
        dims.push_back(static_cast<int>(d));
    }
    if (!dims.empty()) pd.set_ints(1, dims);
    n.emit("Constant", {}, {name}, pd, {t});
    return name;
}

namespace {

// An empty int64 vector standing for an absent optional input before a present one.
std::string absent_blob(NodeContext& n, const std::string& what) { return constant_blob(n, int64_tensor({}), what); }

// Input i is present but its value is not known at conversion time.
bool runtime_value(const NodeContext& n, int i) { return n.has_input(i) && n.constant(i) == nullptr; }

} // namespace

std::vector<std::string> inputs_upto(NodeContext& n, int count)
{
    int last = -1;
    for (int i = 0; i < std::min(count, n.num_inputs()); ++i)
        if (n.has_input(i)) last = i;
    std::vector<std::string> blobs;
    for (int i = 0; i <= last; ++i) blobs.push_back(n.has_input(i) ? n.input(i) : absent_blob(n, "absent"));
    return blobs;
}

std::vector<std::string> all_outputs(const NodeContext& n)
{
    std::vector<std::string> tops;
    for (int i = 0; i < n.num_outputs(); ++i) tops.push_back(n.output(i));
    return tops;
}

namespace {

// Code of a Scatter reduction attribute.
int reduction_code(const NodeContext& n)
{
    const std::string r = n.attr_string("reduction", "none");
    if (r == "none") return 0;
    if (r == "add") return 1;
    if (r == "mul") return 2;
    if (r == "max") return 3;
    if (r == "min") return 4;
    n.fail("reduction '", r, "' is not one of none, add, mul, max, min");
}

// ---- shapes and views ----------------------------------------------------------

void convert_shape(NodeContext& n)
{
    ParamDict pd;
    if (n.has_attr("start")) pd.set_int(0, clamp_to_int(n.attr_int("start", 0)));
    if (n.has_attr("end")) pd.set_int(1, clamp_to_int(n.attr_int("end", INT_MAX)));
    n.emit("Shape", {n.input(0)}, {n.output(0)}, pd);
}

void convert_size(NodeContext& n) { n.emit("Size", {n.input(0)}, {n.output(0)}); }

void convert_reshape(NodeContext& n)
{
    ParamDict pd;
    if (n.attr_int("allowzero", 0) != 0) pd.set_int(21, 1);
    std::string shape;
    if (n.has_input(1)) {
        shape = n.input(1);
        if (runtime_value(n, 1)) pd.set_int(kDynamicParam, 1);
    } else {
        n.check(n.has_attr("shape"), "needs a shape input (or, before opset 5, a shape attribute)");
        shape = constant_blob(n, int64_tensor(n.attr_ints("shape")), "shape");
    }
    n.emit("Reshape", {n.input(0), shape}, {n.output(0)}, pd);
}

void convert_flatten(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, clamp_to_int(n.attr_int("axis", 1)));
    n.emit("Flatten", {n.input(0)}, {n.output(0)}, pd);
}

// Squeeze / Unsqueeze: axes attribute before opset 13, input after.
void convert_squeeze_like(NodeContext& n, const char* type, bool axes_required)
{
    std::vector<std::string> bottoms{n.input(0)};
    ParamDict pd;
    pd.set_int(21, 1); // the axes-input form
    if (n.opset() < 13 || n.has_attr("axes")) {
        if (n.has_attr("axes")) bottoms.push_back(constant_blob(n, int64_tensor(n.attr_ints("axes")), "axes"));
    } else if (n.has_input(1)) {
        bottoms.push_back(n.input(1));
        if (runtime_value(n, 1)) pd.set_int(kDynamicParam, 1);
    }
    n.check(!axes_required || bottoms.size() == 2, "needs axes");
    n.emit(type, bottoms, {n.output(0)}, pd);
}

void convert_squeeze(NodeContext& n) { convert_squeeze_like(n, "Squeeze", false); }
void convert_unsqueeze(NodeContext& n) { convert_squeeze_like(n, "ExpandDims", true); }

void convert_transpose(NodeContext& n)
{
    ParamDict pd;
    if (n.has_attr("perm"))
        pd = params_with_ints(1, n.attr_ints("perm"), "perm");
    else
        pd.set_int(2, 1); // the axes reversed
    n.emit("Permute", {n.input(0)}, {n.output(0)}, pd);
}

// ---- gather / scatter ----------------------------------------------------------

template <const char* Type, int DefaultAxis>
void convert_axis_op(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, clamp_to_int(n.attr_int("axis", DefaultAxis)));
    std::vector<std::string> bottoms;
    for (int i = 0; i < n.num_inputs(); ++i) bottoms.push_back(n.input(i));
    n.emit(Type, bottoms, {n.output(0)}, pd);
}

constexpr char kGather[] = "Gather";
constexpr char kGatherElements[] = "GatherElements";
constexpr char kConcat[] = "Concat";

void convert_gather_nd(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, clamp_to_int(n.attr_int("batch_dims", 0)));
    n.emit("GatherND", {n.input(0), n.input(1)}, {n.output(0)}, pd);
}

void convert_scatter_elements(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, clamp_to_int(n.attr_int("axis", 0)));
    pd.set_int(1, reduction_code(n));
    n.emit("ScatterElements", {n.input(0), n.input(1), n.input(2)}, {n.output(0)}, pd);
}

void convert_scatter_nd(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, reduction_code(n));
    n.emit("ScatterND", {n.input(0), n.input(1), n.input(2)}, {n.output(0)}, pd);
}

// ---- slicing and joining -------------------------------------------------------

void convert_slice(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(22, 1); // Crop's ONNX-slice form
    std::vector<std::string> bottoms{n.input(0)};
    if (n.opset() < 10) {
        bottoms.push_back(constant_blob(n, int64_tensor(n.attr_ints("starts")), "starts"));
        bottoms.push_back(constant_blob(n, int64_tensor(n.attr_ints("ends")), "ends"));
        if (n.has_attr("axes")) bottoms.push_back(constant_blob(n, int64_tensor(n.attr_ints("axes")), "axes"));
    } else {
        bottoms = inputs_upto(n, 5);
        n.check(bottoms.size() >= 3, "needs starts and ends");
        for (int i = 1; i < 5; ++i)
            if (runtime_value(n, i)) pd.set_int(23, 1); // dynamic
    }
    n.emit("Crop", bottoms, {n.output(0)}, pd);
}

void convert_split(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(1, clamp_to_int(n.attr_int("axis", 0)));
    if (n.has_attr("num_outputs"))
        n.check(n.attr_int("num_outputs", 0) == n.num_outputs(), "num_outputs ", n.attr_int("num_outputs", 0),
                " differs from the node's ", n.num_outputs(), " outputs");
    std::vector<std::string> bottoms{n.input(0)};
    if (n.opset() < 13 || n.has_attr("split")) {
        if (n.has_attr("split")) bottoms.push_back(constant_blob(n, int64_tensor(n.attr_ints("split")), "split"));
    } else if (n.has_input(1)) {
        bottoms.push_back(n.input(1));
        if (runtime_value(n, 1)) pd.set_int(kDynamicParam, 1);
    }
    n.emit("Slice", bottoms, all_outputs(n), pd);
}

// ---- shape-valued inputs -------------------------------------------------------

// One data input and one shape-like value input (Expand, Tile).
template <const char* Type>
void convert_with_value_input(NodeContext& n)
{
    ParamDict pd;
    if (runtime_value(n, 1)) pd.set_int(kDynamicParam, 1);
    if (std::string(Type) == "Tile") pd.set_int(21, 1); // Tile's repeats-input form
    n.emit(Type, {n.input(0), n.input(1)}, {n.output(0)}, pd);
}

constexpr char kExpand[] = "Expand";
constexpr char kTile[] = "Tile";

void convert_constant_of_shape(NodeContext& n)
{
    ParamDict pd;
    std::vector<Tensor> weights;
    if (n.has_attr("value")) {
        const Tensor v = n.attr_tensor("value");
        n.check(v.numel() == 1, "value must hold one element, got shape ", shape_str(v.shape()));
        pd.set_int(0, static_cast<int>(v.dtype()));
        weights.push_back(v.reshaped({1}));
    } else {
        pd.set_int(0, static_cast<int>(DType::F32));
        pd.set_int(1, 0); // no value: float zeros
    }
    if (runtime_value(n, 0)) pd.set_int(kDynamicParam, 1);
    n.emit("ConstantOfShape", {n.input(0)}, {n.output(0)}, pd, weights);
}

void convert_range(NodeContext& n)
{
    ParamDict pd;
    for (int i = 0; i < 3; ++i)
        if (runtime_value(n, i)) pd.set_int(kDynamicParam, 1);
    n.emit("Range", {n.input(0), n.input(1), n.input(2)}, {n.output(0)}, pd);
}

// ---- element-wise ----------------------------------------------------------------

void convert_cast(NodeContext& n)
{
    n.check(n.has_attr("to"), "needs the 'to' attribute");
    ParamDict pd;
    pd.set_int(2, static_cast<int>(dtype_from_onnx(static_cast<int>(n.attr_int("to", 0)), "Cast 'to'")));
    n.emit("Cast", {n.input(0)}, {n.output(0)}, pd);
}

void convert_cast_like(NodeContext& n) { n.emit("Cast", {n.input(0), n.input(1)}, {n.output(0)}); }

void convert_trilu(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, n.attr_int("upper", 1) != 0);
    std::vector<std::string> bottoms{n.input(0)};
    if (n.has_input(1)) bottoms.push_back(n.input(1));
    n.emit("Trilu", bottoms, {n.output(0)}, pd);
}

void convert_cumsum(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, n.attr_int("exclusive", 0) != 0);
    pd.set_int(1, n.attr_int("reverse", 0) != 0);
    n.emit("CumSum", {n.input(0), n.input(1)}, {n.output(0)}, pd);
}

// ---- padding and rearrangement ---------------------------------------------------

void convert_pad(NodeContext& n)
{
    const std::string mode = n.attr_string("mode", "constant");
    ParamDict pd;
    pd.set_int(21, 1); // Padding with its pads as inputs
    if (mode == "constant") pd.set_int(4, 0);
    else if (mode == "edge") pd.set_int(4, 1);
    else if (mode == "reflect") pd.set_int(4, 2);
    else if (mode == "wrap") pd.set_int(4, 3);
    else n.fail("mode '", mode, "' is not one of constant, reflect, edge, wrap");
    std::vector<std::string> bottoms;
    if (n.opset() < 11) {
        n.check(n.has_attr("pads"), "needs the pads attribute");
        bottoms = {n.input(0), constant_blob(n, int64_tensor(n.attr_ints("pads")), "pads")};
        const float value = n.attr_float("value", 0.f);
        if (value != 0.f) bottoms.push_back(constant_blob(n, scalar_tensor(value), "value"));
    } else {
        bottoms = inputs_upto(n, 4);
        n.check(bottoms.size() >= 2, "needs pads");
        if (runtime_value(n, 1) || runtime_value(n, 3)) pd.set_int(kDynamicParam, 1);
    }
    n.emit("Padding", bottoms, {n.output(0)}, pd);
}

void convert_depth_to_space(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, clamp_to_int(n.attr_int("blocksize", 0)));
    const std::string mode = n.attr_string("mode", "DCR");
    n.check(mode == "DCR" || mode == "CRD", "mode '", mode, "' is not DCR or CRD");
    pd.set_int(1, mode == "CRD");
    n.emit("DepthToSpace", {n.input(0)}, {n.output(0)}, pd);
}

void convert_space_to_depth(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, clamp_to_int(n.attr_int("blocksize", 0)));
    n.emit("SpaceToDepth", {n.input(0)}, {n.output(0)}, pd);
}

// ---- index-producing ---------------------------------------------------------------

void convert_one_hot(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, clamp_to_int(n.attr_int("axis", -1)));
    if (runtime_value(n, 1)) pd.set_int(kDynamicParam, 1);
    n.emit("OneHot", {n.input(0), n.input(1), n.input(2)}, {n.output(0)}, pd);
}

void convert_nonzero(NodeContext& n) { n.emit("NonZero", {n.input(0)}, {n.output(0)}); }

void convert_topk(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, clamp_to_int(n.attr_int("axis", -1)));
    pd.set_int(1, n.attr_int("largest", 1) != 0);
    pd.set_int(2, n.attr_int("sorted", 1) != 0);
    std::string k;
    if (n.opset() < 10) {
        n.check(n.has_attr("k"), "needs the k attribute");
        k = constant_blob(n, int64_tensor({n.attr_int("k", 0)}), "k");
    } else {
        k = n.input(1);
        if (runtime_value(n, 1)) pd.set_int(kDynamicParam, 1);
    }
    n.emit("TopK", {n.input(0), k}, all_outputs(n), pd);
}

// ArgMax's ONNX form keeps off ncnn's ids: 20=1, then axis from 21; ArgMin's from 0.
template <const char* Type>
void convert_arg(NodeContext& n)
{
    ParamDict pd;
    const bool argmax = std::string(Type) == "ArgMax";
    const int first = argmax ? 21 : 0;
    if (argmax) pd.set_int(20, 1);
    pd.set_int(first, clamp_to_int(n.attr_int("axis", 0)));
    pd.set_int(first + 1, n.attr_int("keepdims", 1) != 0);
    pd.set_int(first + 2, n.attr_int("select_last_index", 0) != 0);
    n.emit(Type, {n.input(0)}, {n.output(0)}, pd);
}

constexpr char kArgMax[] = "ArgMax";
constexpr char kArgMin[] = "ArgMin";

void convert_eye_like(NodeContext& n)
{
    ParamDict pd;
    if (n.has_attr("dtype"))
        pd.set_int(0, static_cast<int>(dtype_from_onnx(static_cast<int>(n.attr_int("dtype", 0)), "EyeLike dtype")));
    pd.set_int(1, clamp_to_int(n.attr_int("k", 0)));
    n.emit("EyeLike", {n.input(0)}, {n.output(0)}, pd);
}

void convert_compress(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, clamp_to_int(n.attr_int("axis", 0)));
    pd.set_int(1, n.has_attr("axis"));
    n.emit("Compress", {n.input(0), n.input(1)}, {n.output(0)}, pd);
}

} // namespace

std::vector<ConverterEntry> tensor_converters()
{
    return {
        {"Shape", convert_shape},
        {"Size", convert_size},
        {"Reshape", convert_reshape},
        {"Flatten", convert_flatten},
        {"Squeeze", convert_squeeze},
        {"Unsqueeze", convert_unsqueeze},
        {"Transpose", convert_transpose},
        {"Gather", convert_axis_op<kGather, 0>},
        {"GatherElements", convert_axis_op<kGatherElements, 0>},
        {"GatherND", convert_gather_nd},
        {"ScatterElements", convert_scatter_elements},
        {"Scatter", convert_scatter_elements},
        {"ScatterND", convert_scatter_nd},
        {"Slice", convert_slice},
        {"Split", convert_split},
        {"Concat", convert_axis_op<kConcat, 0>},
        {"Expand", convert_with_value_input<kExpand>},
        {"Tile", convert_with_value_input<kTile>},
        {"ConstantOfShape", convert_constant_of_shape},
        {"Range", convert_range},
        {"Cast", convert_cast},
        {"CastLike", convert_cast_like},
        {"Trilu", convert_trilu},
        {"CumSum", convert_cumsum},
        {"Pad", convert_pad},
        {"DepthToSpace", convert_depth_to_space},
        {"SpaceToDepth", convert_space_to_depth},
        {"OneHot", convert_one_hot},
        {"NonZero", convert_nonzero},
        {"TopK", convert_topk},
        {"ArgMax", convert_arg<kArgMax>},
        {"ArgMin", convert_arg<kArgMin>},
        {"EyeLike", convert_eye_like},
        {"Compress", convert_compress},
    };
}

} // namespace kestrel::onnx_import
