// Softmax family (Softmax, LogSoftmax, Hardmax), losses
// (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss), Dropout, windows
// (Hann, Hamming, Blackman), DFT, STFT, MelWeightMatrix, ReverseSequence, Det,
// Unique.
#include <climits>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/onnx_tensor.h"

namespace kestrel::onnx_import {

namespace {

constexpr int kDynamicParam = 20;

int int_attr(const NodeContext& n, const std::string& name, int64_t def)
{
    const int64_t v = n.attr_int(name, def);
    n.check(v >= INT_MIN && v <= INT_MAX, name, " ", v, " does not fit in 32 bits");
    return static_cast<int>(v);
}

// A Constant layer holding a float scalar; returns its blob.
std::string scalar_blob(NodeContext& n, float value, const std::string& what)
{
    const std::string name = n.temp(what);
    ParamDict pd;
    pd.set_int(0, static_cast<int>(DType::F32));
    n.emit("Constant", {}, {name}, pd, {scalar_tensor(value)});
    return name;
}

// ---- Softmax, LogSoftmax, Hardmax --------------------------------------------------

// Params of the layer (named as the op) computing it along one axis.
ParamDict along_axis(const NodeContext& n, int axis)
{
    ParamDict pd;
    pd.set_int(0, axis);
    if (n.op_type() == "Softmax") pd.set_int(1, 1); // ncnn's Softmax: 1=fixbug0, the correct axis handling
    return pd;
}

// Opset >= 13: along `axis` (default -1). Before: over the input coerced to 2-D
// at `axis` (default 1), i.e. over the flattened block of axes [axis, rank):
// Flatten -> the op along axis 1 -> Reshape back to the input's shape.
// When `axis` is the last axis both forms are the same single layer.
void convert_softmax_family(NodeContext& n)
{
    const bool coerce_2d = n.opset() < 13;
    const int axis = int_attr(n, "axis", coerce_2d ? 1 : -1);
    const int rank = n.input_rank(0);
    if (!coerce_2d || axis == -1 || (rank > 0 && axis == rank - 1)) {
        n.emit(n.op_type(), {n.input(0)}, {n.output(0)}, along_axis(n, axis));
        return;
    }
    const std::string x = n.input(0), flat = n.temp("flat"), flat_y = n.temp("flat_y"), shape = n.temp("shape");
    ParamDict flatten;
    flatten.set_int(0, axis);
    n.emit("Flatten", {x}, {flat}, flatten);
    n.emit(n.op_type(), {flat}, {flat_y}, along_axis(n, 1));
    n.emit("Shape", {x}, {shape});
    n.emit("Reshape", {flat_y, shape}, {n.output(0)});
}

// ---- losses ------------------------------------------------------------------------

// NegativeLogLikelihoodLoss params from the reduction and ignore_index attributes.
ParamDict nll_params(const NodeContext& n)
{
    const std::string reduction = n.attr_string("reduction", "mean");
    ParamDict pd;
    if (reduction == "none") pd.set_int(0, 0);
    else if (reduction == "sum") pd.set_int(0, 1);
    else if (reduction == "mean") pd.set_int(0, 2);
    else n.fail("reduction '", reduction, "' is not none, sum or mean");
    if (n.has_attr("ignore_index")) {
        pd.set_int(1, 1);
        pd.set_int(2, int_attr(n, "ignore_index", 0));
    }
    return pd;
}

// Inputs (scores or log-probabilities, target[, weight]).
std::vector<std::string> loss_inputs(NodeContext& n)
{
    std::vector<std::string> bottoms = {n.input(0), n.input(1)};
    if (n.has_input(2)) bottoms.push_back(n.input(2));
    return bottoms;
}

void convert_nll_loss(NodeContext& n)
{
    n.emit("NegativeLogLikelihoodLoss", loss_inputs(n), {n.output(0)}, nll_params(n));
}

// SoftmaxCrossEntropyLoss = NegativeLogLikelihoodLoss of LogSoftmax over the
// class axis (1); the optional second output is that log-probability tensor.
void convert_softmax_cross_entropy(NodeContext& n)
{
    std::vector<std::string> bottoms = loss_inputs(n);
    const std::string log_prob = n.has_output(1) ? n.output(1) : n.temp("log_prob");
    ParamDict axis;
    axis.set_int(0, 1);
    n.emit("LogSoftmax", {bottoms[0]}, {log_prob}, axis);
    bottoms[0] = log_prob;
    n.emit("NegativeLogLikelihoodLoss", bottoms, {n.output(0)}, nll_params(n));
}

// ---- Dropout -----------------------------------------------------------------------

// True when input i is a constant whose first element is non-zero.
bool constant_true(const NodeContext& n, int i)
{
    const Tensor* c = n.constant(i);
    return c != nullptr && c->numel() > 0 && tensor_to_floats(*c)[0] != 0.f;
}

// Inference-time Dropout is the identity (a Noop); the optional mask output is
// all true (Dropout's ONNX form). training_mode (opset 12+) is accepted when it
// is false or the ratio is 0; when it is not constant, Dropout checks it at run time.
void convert_dropout(NodeContext& n)
{
    const bool has_training = n.opset() >= 12 && n.has_input(2);
    const bool surely_inference = !has_training || (n.constant(2) != nullptr && !constant_true(n, 2));
    if (surely_inference && !n.has_output(1)) {
        n.emit("Noop", {n.input(0)}, {n.output(0)});
        return;
    }
    std::vector<std::string> bottoms = {n.input(0)};
    if (has_training) {
        // Both known: refuse now rather than when the model runs.
        const Tensor* ratio = n.has_input(1) ? n.constant(1) : nullptr;
        const bool ratio_known = !n.has_input(1) || (ratio && ratio->numel() == 1);
        const float ratio_value = ratio && ratio->numel() == 1 ? tensor_to_floats(*ratio)[0] : 0.5f;
        n.check(!(constant_true(n, 2) && ratio_known && ratio_value != 0.f), "training mode with ratio ", ratio_value,
                " > 0 drops random elements, which is not supported");
        bottoms.push_back(n.has_input(1) ? n.input(1) : scalar_blob(n, 0.5f, "ratio"));
        bottoms.push_back(n.input(2));
    }
    std::vector<std::string> tops = {n.output(0)};
    ParamDict pd;
    pd.set_int(20, 1); // Dropout's ONNX form
    if (n.has_output(1)) {
        tops.push_back(n.output(1));
        // Before opset 10 the mask had the data's type.
        const DType* t = n.input_dtype(0);
        if (n.opset() < 10) pd.set_int(21, static_cast<int>(t ? *t : DType::F32));
    }
    n.emit("Dropout", bottoms, tops, pd);
}

// ---- small misc ops -----------------------------------------------------------------

void convert_window(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, n.attr_int("periodic", 1) != 0 ? 1 : 0);
    const DType t = dtype_from_onnx(static_cast<int>(n.attr_int("output_datatype", onnx::TensorProto::FLOAT)),
                                    "output_datatype");
    pd.set_int(1, static_cast<int>(t));
    if (n.constant(0) == nullptr) pd.set_int(kDynamicParam, 1);
    n.emit(n.op_type(), {n.input(0)}, {n.output(0)}, pd);
}

// DFT (opset 17: axis an attribute; dft_length an optional input).
void convert_dft(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, int_attr(n, "axis", 1));
    pd.set_int(1, n.attr_int("inverse", 0) != 0 ? 1 : 0);
    pd.set_int(2, n.attr_int("onesided", 0) != 0 ? 1 : 0);
    std::vector<std::string> inputs = {n.input(0)};
    if (n.has_input(1)) {
        inputs.push_back(n.input(1));
        if (n.constant(1) == nullptr) pd.set_int(kDynamicParam, 1);
    }
    n.emit("DFT", inputs, {n.output(0)}, pd);
}

// STFT (opset 17): signal, frame_step, [window], [frame_length]; onesided.
void convert_stft(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, n.attr_int("onesided", 1) != 0 ? 1 : 0);
    if (!n.constant(1) || (n.has_input(3) && !n.constant(3))) pd.set_int(kDynamicParam, 1);
    n.emit("STFT", inputs_upto(n, 4), {n.output(0)}, pd);
}

// MelWeightMatrix (opset 17): five one-value inputs; output_datatype.
void convert_mel_weight_matrix(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, static_cast<int>(dtype_from_onnx(
                      static_cast<int>(n.attr_int("output_datatype", onnx::TensorProto::FLOAT)), "output_datatype")));
    if (!n.constant(0) || !n.constant(1)) pd.set_int(kDynamicParam, 1);
    n.emit("MelWeightMatrix", inputs_upto(n, 5), {n.output(0)}, pd);
}

void convert_reverse_sequence(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, int_attr(n, "batch_axis", 1));
    pd.set_int(1, int_attr(n, "time_axis", 0));
    n.emit("ReverseSequence", {n.input(0), n.input(1)}, {n.output(0)}, pd);
}

void convert_det(NodeContext& n) { n.emit("Det", {n.input(0)}, {n.output(0)}); }

// Unique's outputs up to the last one used; unused ones before it get temporary blobs.
void convert_unique(NodeContext& n)
{
    ParamDict pd;
    if (n.has_attr("axis")) {
        pd.set_int(0, int_attr(n, "axis", 0));
        pd.set_int(1, 1);
    }
    pd.set_int(2, n.attr_int("sorted", 1) != 0 ? 1 : 0);
    int last = 0;
    for (int i = 0; i < n.num_outputs(); ++i)
        if (n.has_output(i)) last = i;
    std::vector<std::string> tops;
    for (int i = 0; i <= last; ++i) tops.push_back(n.has_output(i) ? n.output(i) : n.temp("unused"));
    n.emit("Unique", {n.input(0)}, tops, pd);
}

} // namespace

std::vector<ConverterEntry> losses_converters()
{
    return {
        {"Softmax", convert_softmax_family},
        {"LogSoftmax", convert_softmax_family},
        {"Hardmax", convert_softmax_family},
        {"NegativeLogLikelihoodLoss", convert_nll_loss},
        {"SoftmaxCrossEntropyLoss", convert_softmax_cross_entropy},
        {"Dropout", convert_dropout},
        {"HannWindow", convert_window},
        {"HammingWindow", convert_window},
        {"BlackmanWindow", convert_window},
        {"DFT", convert_dft},
        {"STFT", convert_stft},
        {"MelWeightMatrix", convert_mel_weight_matrix},
        {"ReverseSequence", convert_reverse_sequence},
        {"Det", convert_det},
        {"Unique", convert_unique},
    };
}

} // namespace kestrel::onnx_import
