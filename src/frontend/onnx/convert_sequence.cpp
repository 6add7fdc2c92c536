// ONNX's sequence operators onto our sequence layers (src/ops/sequence/):
// SequenceEmpty becomes a SequenceConstruct of no input; the layers that
// give an element (SequenceAt, ConcatFromSequence) record the elements'
// dtype where ONNX's type inference knows it, for their placeholders.
#include "frontend/onnx/converter.h"
#include "frontend/onnx/onnx_tensor.h"

namespace kestrel::onnx_import {

namespace {

std::vector<std::string> given_inputs(NodeContext& n)
{
    std::vector<std::string> bottoms;
    for (int i = 0; i < n.num_inputs(); ++i)
        if (n.has_input(i)) bottoms.push_back(n.input(i));
        else n.check(i == n.num_inputs() - 1, "only the last input may be absent");
    return bottoms;
}

// The dtype of a value's tensors (its own, or its sequence's elements'), or -1.
int element_dtype(NodeContext& n, const std::string& onnx_name)
{
    const onnx::TypeProto* t = n.type_of(onnx_name);
    if (t && t->has_sequence_type()) t = &t->sequence_type().elem_type();
    if (!t || !t->has_tensor_type() || t->tensor_type().elem_type() == 0) return -1;
    return static_cast<int>(dtype_from_onnx(t->tensor_type().elem_type(), "'" + onnx_name + "'"));
}

void convert_sequence_empty(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, static_cast<int>(dtype_from_onnx(static_cast<int>(n.attr_int("dtype", 1)), "dtype")));
    n.emit("SequenceConstruct", {}, {n.output(0)}, pd);
}

void convert_sequence_plain(NodeContext& n) { n.emit(n.op_type(), given_inputs(n), {n.output(0)}); }

void convert_sequence_at(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, element_dtype(n, n.node().output(0)));
    n.emit("SequenceAt", given_inputs(n), {n.output(0)}, pd);
}

void convert_split_to_sequence(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, static_cast<int>(n.attr_int("axis", 0)));
    pd.set_int(1, static_cast<int>(n.attr_int("keepdims", 1)));
    n.emit("SplitToSequence", given_inputs(n), {n.output(0)}, pd);
}

void convert_concat_from_sequence(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, static_cast<int>(n.attr_int("axis", 0)));
    pd.set_int(1, static_cast<int>(n.attr_int("new_axis", 0)));
    pd.set_int(2, element_dtype(n, n.node().output(0)));
    n.emit("ConcatFromSequence", {n.input(0)}, {n.output(0)}, pd);
}

// Optional(x) or Optional() (its `type` attribute only names what it could hold).
void convert_optional(NodeContext& n)
{
    std::vector<std::string> bottoms;
    if (n.has_input(0)) bottoms.push_back(n.input(0));
    n.emit("Optional", bottoms, {n.output(0)});
}

// OptionalHasElement with no input (opset 18: absent means none).
void convert_optional_has_element(NodeContext& n)
{
    std::vector<std::string> bottoms;
    if (n.has_input(0)) bottoms.push_back(n.input(0));
    n.emit("OptionalHasElement", bottoms, {n.output(0)});
}

void convert_optional_get_element(NodeContext& n)
{
    const onnx::TypeProto* t = n.type_of(n.node().output(0));
    ParamDict pd;
    pd.set_int(0, t && t->has_sequence_type() ? static_cast<int>(DType::Sequence) : element_dtype(n, n.node().output(0)));
    n.emit("OptionalGetElement", {n.input(0)}, {n.output(0)}, pd);
}

} // namespace

std::vector<ConverterEntry> sequence_converters()
{
    return {
        {"SequenceEmpty", convert_sequence_empty},
        {"SequenceConstruct", convert_sequence_plain},
        {"SequenceInsert", convert_sequence_plain},
        {"SequenceErase", convert_sequence_plain},
        {"SequenceLength", convert_sequence_plain},
        {"SequenceAt", convert_sequence_at},
        {"SplitToSequence", convert_split_to_sequence},
        {"ConcatFromSequence", convert_concat_from_sequence},
        {"Optional", convert_optional},
        {"OptionalHasElement", convert_optional_has_element},
        {"OptionalGetElement", convert_optional_get_element},
    };
}

} // namespace kestrel::onnx_import
