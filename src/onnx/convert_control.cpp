// Control flow: If. Each branch is converted into a Net of its own, whose
// inputs are the values of the enclosing graph the branches read; the If
// layer (src/ops/control/if.cpp) carries both as .param text and .bin bytes.
#include <algorithm>
#include <set>

#include "onnx/converter.h"

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
    int id = 0;
    for (const auto* graph : {&then_graph, &else_graph}) {
        const Net net = n.convert_subgraph(*graph, captured, graph == &then_graph ? "then_branch" : "else_branch");
        const std::string text = net.param_text();
        const std::vector<uint8_t> bin = net.model_bytes();
        n.check(text.size() < static_cast<size_t>(INT32_MAX) && bin.size() < static_cast<size_t>(INT32_MAX),
                "a branch over 2 GB");
        pd.set_int(id++, static_cast<int>(text.size()));
        pd.set_int(id++, static_cast<int>(bin.size()));
        weights.push_back(bytes_tensor(text.data(), text.size()));
        weights.push_back(bytes_tensor(bin.data(), bin.size()));
    }
    std::vector<std::string> tops;
    for (int i = 0; i < n.num_outputs(); ++i) tops.push_back(n.output(i));
    n.emit("If", bottoms, tops, pd, weights);
}

} // namespace

std::vector<ConverterEntry> control_converters() { return {{"If", convert_if}}; }

} // namespace kestrel::onnx_import
