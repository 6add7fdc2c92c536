// Control flow: If, Loop, Scan. Each branch or body is converted into a Net
// of its own, whose inputs are its graph's inputs and then the values of the
// enclosing graph it reads; the layer (src/ops/control/{if,loop,scan}.cpp)
// carries it as .param text and .bin bytes (ops/control/subnet.h).
#include <algorithm>
#include <set>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/onnx_tensor.h"

namespace kestrel::onnx_import {

namespace {

// Names `graph` reads without defining them (its nested subgraphs included),
// appended to `outer` in first-use order.
void collect_outer_names(const onnx::GraphProto& graph, std::set<std::string> defined,
                         std::vector<std::string>& outer)
{
    for (const auto& init : graph.initializer()) defined.insert(init.name());
    for (const auto& in : graph.input()) defined.insert(in.name());
    auto read = [&](const std::string& name) {
        if (!name.empty() && !defined.count(name) && std::find(outer.begin(), outer.end(), name) == outer.end())
            outer.push_back(name);
    };
    for (const auto& node : graph.node()) {
        for (const auto& in : node.input()) read(in);
        for (const auto& attr : node.attribute()) {
            if (attr.type() == onnx::AttributeProto::GRAPH) collect_outer_names(attr.g(), defined, outer);
            for (const auto& g : attr.graphs()) collect_outer_names(g, defined, outer);
        }
        for (const auto& out : node.output()) defined.insert(out);
    }
    for (const auto& out : graph.output()) read(out.name());
}

const onnx::GraphProto& branch(NodeContext& n, const std::string& name)
{
    for (const auto& a : n.node().attribute())
        if (a.name() == name) {
            n.check(a.type() == onnx::AttributeProto::GRAPH, "attribute '", name, "' must be a graph");
            return a.g();
        }
    n.fail("the ", name, " attribute is missing");
}

Tensor bytes_tensor(const void* data, size_t size)
{
    Tensor t({static_cast<int64_t>(size)}, DType::U8);
    if (size) std::copy(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + size, t.data<uint8_t>());
    return t;
}

// Appends `graph` converted into a Net (its inputs, then `captured`) to an
// If / Loop / Scan layer: its .param text and .bin lengths as params id and
// id + 1, the bytes as two weights.
void add_subnet(NodeContext& n, const onnx::GraphProto& graph, const std::vector<std::string>& captured,
                const std::string& what, int id, ParamDict& pd, std::vector<Tensor>& weights)
{
    const Net net = n.convert_subgraph(graph, captured, what);
    const std::string text = net.param_text();
    const std::vector<uint8_t> bin = net.model_bytes();
    n.check(text.size() < static_cast<size_t>(INT32_MAX) && bin.size() < static_cast<size_t>(INT32_MAX),
            "a ", what, " over 2 GB");
    pd.set_int(id, static_cast<int>(text.size()));
    pd.set_int(id + 1, static_cast<int>(bin.size()));
    weights.push_back(bytes_tensor(text.data(), text.size()));
    weights.push_back(bytes_tensor(bin.data(), bin.size()));
}

void convert_if(NodeContext& n)
{
    const onnx::GraphProto& then_graph = branch(n, "then_branch");
    const onnx::GraphProto& else_graph = branch(n, "else_branch");
    n.check(then_graph.output_size() == n.num_outputs() && else_graph.output_size() == n.num_outputs(),
            "the branches give ", then_graph.output_size(), " and ", else_graph.output_size(), " outputs for ",
            n.num_outputs(), " node outputs");
    std::vector<std::string> captured;
    collect_outer_names(then_graph, {}, captured);
    collect_outer_names(else_graph, {}, captured);
    std::vector<std::string> bottoms = {n.input(0)};
    for (const std::string& name : captured) bottoms.push_back(n.outer_blob(name));
    ParamDict pd;
    std::vector<Tensor> weights;
    add_subnet(n, then_graph, captured, "then_branch", 0, pd, weights);
    add_subnet(n, else_graph, captured, "else_branch", 2, pd, weights);
    n.emit("If", bottoms, all_outputs(n), pd, weights);
}

// `body` with the element type of each input that has none set (the body
// inputs of Loop and Scan may leave theirs to the node's inputs, ONNX infers
// them), and the dims of inputs [free_from, ...) made free: a carried value
// may change shape between iterations (PyTorch declares the first's).
onnx::GraphProto typed_body(const onnx::GraphProto& body, const std::vector<const DType*>& types, int free_from)
{
    onnx::GraphProto typed = body;
    for (int i = 0; i < typed.input_size() && i < static_cast<int>(types.size()); ++i) {
        onnx::TypeProto* t = typed.mutable_input(i)->mutable_type();
        const bool untyped = !t->has_tensor_type() || t->tensor_type().elem_type() == 0;
        if (untyped && types[i]) // (no type known: left to the conversion's error)
            t->mutable_tensor_type()->set_elem_type(onnx_type_from_dtype(*types[i]));
        if (i < free_from || !t->tensor_type().has_shape()) continue;
        const std::string& name = typed.input(i).name();
        auto* shape = t->mutable_tensor_type()->mutable_shape();
        for (int d = 0; d < shape->dim_size(); ++d)
            shape->mutable_dim(d)->set_dim_param(name + "_" + std::to_string(d));
    }
    return typed;
}

// ONNX Loop -> our Loop (ops/control/loop.cpp): the optional trip count and
// condition flagged by params 2 and 3, the body's outside values appended.
void convert_loop(NodeContext& n)
{
    const onnx::GraphProto& body = branch(n, "body");
    const int carried = n.num_inputs() - 2;
    n.check(carried >= 0, "Loop needs the trip count and condition inputs (empty names when absent)");
    n.check(body.input_size() == 2 + carried, "the body reads ", body.input_size(), " inputs; the node gives ",
            carried, " carried values (the body needs 2 more: the iteration and the condition)");
    n.check(body.output_size() == 1 + n.num_outputs(), "the body gives ", body.output_size(),
            " outputs for the node's ", n.num_outputs(), " (and the condition)");
    static const DType kI64 = DType::I64, kBool = DType::Bool;
    std::vector<const DType*> types = {&kI64, &kBool};
    for (int i = 0; i < carried; ++i) types.push_back(n.input_dtype(2 + i));
    const onnx::GraphProto typed = typed_body(body, types, 2);
    std::vector<std::string> captured;
    collect_outer_names(typed, {}, captured);
    std::vector<std::string> bottoms;
    for (int i = 0; i < n.num_inputs(); ++i)
        if (n.has_input(i)) bottoms.push_back(n.input(i));
        else n.check(i < 2, "Loop's carried value ", i - 2, " has no name");
    for (const std::string& name : captured) bottoms.push_back(n.outer_blob(name));
    ParamDict pd;
    std::vector<Tensor> weights;
    add_subnet(n, typed, captured, "body", 0, pd, weights);
    pd.set_int(2, n.has_input(0) ? 1 : 0);
    pd.set_int(3, n.has_input(1) ? 1 : 0);
    pd.set_int(4, carried);
    n.emit("Loop", bottoms, all_outputs(n), pd, weights);
}

// ONNX SequenceMap -> our SequenceMap (ops/sequence/sequence_map.cpp): the
// body's inputs typed as the elements of the node's sequence inputs (dims
// free: elements differ) or as its tensor inputs.
void convert_sequence_map(NodeContext& n)
{
    const onnx::GraphProto& body = branch(n, "body");
    n.check(body.input_size() == n.num_inputs(), "the body reads ", body.input_size(), " inputs; the node gives ",
            n.num_inputs());
    n.check(body.output_size() == n.num_outputs(), "the body gives ", body.output_size(), " outputs for the node's ",
            n.num_outputs());
    std::vector<DType> dtypes(static_cast<size_t>(n.num_inputs()), DType::F32);
    std::vector<const DType*> types;
    for (int i = 0; i < n.num_inputs(); ++i) {
        const onnx::TypeProto* t = n.type_of(n.node().input(i));
        if (t && t->has_sequence_type()) t = &t->sequence_type().elem_type();
        if (t && t->has_tensor_type() && t->tensor_type().elem_type() != 0) {
            dtypes[i] = dtype_from_onnx(t->tensor_type().elem_type(), "input '" + n.node().input(i) + "'");
            types.push_back(&dtypes[i]);
        } else {
            types.push_back(nullptr);
        }
    }
    const onnx::GraphProto typed = typed_body(body, types, 0);
    std::vector<std::string> captured;
    collect_outer_names(typed, {}, captured);
    std::vector<std::string> bottoms;
    for (int i = 0; i < n.num_inputs(); ++i) bottoms.push_back(n.input(i));
    for (const std::string& name : captured) bottoms.push_back(n.outer_blob(name));
    ParamDict pd;
    std::vector<Tensor> weights;
    add_subnet(n, typed, captured, "body", 0, pd, weights);
    pd.set_int(2, n.num_inputs());
    n.emit("SequenceMap", bottoms, all_outputs(n), pd, weights);
}

std::vector<int> ints_of(const std::vector<int64_t>& v) { return std::vector<int>(v.begin(), v.end()); }

// ONNX Scan -> our Scan (ops/control/scan.cpp). Opset 8: a first
// sequence_lens input (optional) and a batch axis on everything, the scan
// axis 1 (`directions` for the inputs); opset 9: axes and directions per
// scan input and output.
void convert_scan(NodeContext& n)
{
    const onnx::GraphProto& body = branch(n, "body");
    const bool batched = n.opset() < 9;
    const int first = batched ? 1 : 0, scan_inputs = static_cast<int>(n.attr_int("num_scan_inputs", -1));
    const int states = n.num_inputs() - first - scan_inputs;
    n.check(scan_inputs >= 1, "num_scan_inputs must be >= 1, got ", scan_inputs);
    n.check(states >= 0, "num_scan_inputs ", scan_inputs, " exceeds the node's ", n.num_inputs() - first, " inputs");
    n.check(body.input_size() == states + scan_inputs, "the body reads ", body.input_size(), " inputs; the node gives ",
            states, " states and ", scan_inputs, " scan inputs");
    n.check(body.output_size() == n.num_outputs(), "the body gives ", body.output_size(), " outputs for the node's ",
            n.num_outputs());
    std::vector<const DType*> types;
    for (int i = first; i < n.num_inputs(); ++i) types.push_back(n.input_dtype(i));
    const onnx::GraphProto typed = typed_body(body, types, static_cast<int>(types.size()));
    std::vector<std::string> captured;
    collect_outer_names(typed, {}, captured);
    std::vector<std::string> bottoms;
    if (batched && n.has_input(0)) bottoms.push_back(n.input(0));
    for (int i = first; i < n.num_inputs(); ++i) {
        n.check(n.has_input(i), "Scan's input ", i, " has no name");
        bottoms.push_back(n.input(i));
    }
    for (const std::string& name : captured) bottoms.push_back(n.outer_blob(name));
    ParamDict pd;
    std::vector<Tensor> weights;
    add_subnet(n, typed, captured, "body", 0, pd, weights);
    pd.set_int(2, scan_inputs);
    pd.set_int(3, states);
    if (batched) {
        pd.set_int(4, 1);
        pd.set_int(5, n.has_input(0) ? 1 : 0);
        if (n.has_attr("directions")) pd.set_ints(11, ints_of(n.attr_ints("directions")));
    } else {
        const std::pair<const char*, int> lists[] = {{"scan_input_axes", 10}, {"scan_input_directions", 11},
                                                     {"scan_output_axes", 12}, {"scan_output_directions", 13}};
        for (const auto& [attr, id] : lists)
            if (n.has_attr(attr)) pd.set_ints(id, ints_of(n.attr_ints(attr)));
    }
    n.emit("Scan", bottoms, all_outputs(n), pd, weights);
}

} // namespace

std::vector<ConverterEntry> control_converters()
{
    return {{"If", convert_if}, {"Loop", convert_loop}, {"Scan", convert_scan}, {"SequenceMap", convert_sequence_map}};
}

} // namespace kestrel::onnx_import
