#include "frontend/onnx/graph_walk.h"

#include <map>
#include <queue>
#include <set>
#include <vector>

#include "kestrel/error.h"

namespace kestrel::onnx_import {

namespace {

// The graphs a node carries in its attributes (If's branches, Loop's and Scan's bodies).
template <class Visit> void for_each_subgraph(const onnx::NodeProto& node, const Visit& visit)
{
    for (const onnx::AttributeProto& a : node.attribute()) {
        if (a.has_g()) visit(a.g());
        for (const onnx::GraphProto& g : a.graphs()) visit(g);
    }
}

template <class Visit> void for_each_subgraph(onnx::NodeProto& node, const Visit& visit)
{
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
        if (a.has_g()) visit(*a.mutable_g());
        for (onnx::GraphProto& g : *a.mutable_graphs()) visit(g);
    }
}

struct Counts {
    int64_t subgraphs = 0, nodes = 0;
};

void count(const onnx::GraphProto& graph, int depth, const OnnxImportOptions& options, const std::string& source,
           Counts& c)
{
    check(depth <= options.max_nesting_depth, source, ": subgraphs nest deeper than ", options.max_nesting_depth,
          " levels (the limit OnnxImportOptions::max_nesting_depth; kestrel: --onnx-limit depth=N)");
    c.nodes += graph.node_size();
    check(c.nodes <= options.max_nodes, source, ": more than ", options.max_nodes,
          " nodes in the model's graphs (the limit OnnxImportOptions::max_nodes; kestrel: --onnx-limit nodes=N)");
    for (const onnx::NodeProto& node : graph.node())
        for_each_subgraph(node, [&](const onnx::GraphProto& sub) {
            check(++c.subgraphs <= options.max_subgraphs, source, ": more than ", options.max_subgraphs,
                  " subgraphs in the model (the limit OnnxImportOptions::max_subgraphs; kestrel: --onnx-limit "
                  "subgraphs=N)");
            count(sub, depth + 1, options, source, c);
        });
}

// Every value name a graph's nodes read, its subgraphs' included.
void names_read(const onnx::GraphProto& graph, std::set<std::string>& names)
{
    for (const onnx::NodeProto& node : graph.node()) {
        names.insert(node.input().begin(), node.input().end());
        for_each_subgraph(node, [&](const onnx::GraphProto& sub) { names_read(sub, names); });
    }
}

// For each node, the nodes of the same graph whose outputs it reads.
std::vector<std::vector<int>> producers_read(const onnx::GraphProto& graph)
{
    std::map<std::string, int> producer;
    for (int i = 0; i < graph.node_size(); ++i)
        for (const std::string& out : graph.node(i).output())
            if (!out.empty()) producer.emplace(out, i);
    std::vector<std::vector<int>> deps(static_cast<size_t>(graph.node_size()));
    for (int i = 0; i < graph.node_size(); ++i) {
        std::set<std::string> reads(graph.node(i).input().begin(), graph.node(i).input().end());
        for_each_subgraph(graph.node(i), [&](const onnx::GraphProto& sub) { names_read(sub, reads); });
        for (const std::string& name : reads)
            if (auto it = producer.find(name); it != producer.end() && it->second != i)
                deps[static_cast<size_t>(i)].push_back(it->second);
    }
    return deps;
}

// A node on a cycle among the nodes not placed: follow unplaced producers until one repeats.
int node_on_cycle(const std::vector<std::vector<int>>& deps, const std::vector<bool>& placed, int start)
{
    std::vector<bool> seen(deps.size(), false);
    int at = start;
    while (!seen[static_cast<size_t>(at)]) {
        seen[static_cast<size_t>(at)] = true;
        for (int d : deps[static_cast<size_t>(at)])
            if (!placed[static_cast<size_t>(d)]) {
                at = d;
                break;
            }
    }
    return at;
}

// Kahn's algorithm, the lowest file index first among the nodes ready.
std::vector<int> topological_order(const onnx::GraphProto& graph, const std::string& source)
{
    const std::vector<std::vector<int>> deps = producers_read(graph);
    const size_t n = deps.size();
    std::vector<int> waiting(n, 0);
    std::vector<std::vector<int>> readers(n);
    for (size_t i = 0; i < n; ++i)
        for (int d : deps[i]) {
            ++waiting[i];
            readers[static_cast<size_t>(d)].push_back(static_cast<int>(i));
        }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (size_t i = 0; i < n; ++i)
        if (waiting[i] == 0) ready.push(static_cast<int>(i));
    std::vector<int> order;
    std::vector<bool> placed(n, false);
    while (!ready.empty()) {
        const int i = ready.top();
        ready.pop();
        order.push_back(i);
        placed[static_cast<size_t>(i)] = true;
        for (int r : readers[static_cast<size_t>(i)])
            if (--waiting[static_cast<size_t>(r)] == 0) ready.push(r);
    }
    if (order.size() < n) {
        int first = 0;
        while (placed[static_cast<size_t>(first)]) ++first;
        const onnx::NodeProto& node = graph.node(node_on_cycle(deps, placed, first));
        fail(source, ": the graph", graph.name().empty() ? "" : " '" + graph.name() + "'", " has a cycle through node '",
             node.name(), "' (", node.op_type(), ", output '", node.output_size() ? node.output(0) : "", "')");
    }
    return order;
}

} // namespace

void check_model_limits(const onnx::ModelProto& model, const OnnxImportOptions& options, const std::string& source)
{
    Counts c;
    count(model.graph(), 0, options, source, c);
}

void sort_nodes_topologically(onnx::GraphProto& graph, const std::string& source)
{
    for (onnx::NodeProto& node : *graph.mutable_node())
        for_each_subgraph(node, [&](onnx::GraphProto& sub) { sort_nodes_topologically(sub, source); });
    const std::vector<int> order = topological_order(graph, source);
    bool sorted = true;
    for (size_t i = 0; i < order.size(); ++i) sorted = sorted && order[i] == static_cast<int>(i);
    if (sorted) return;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(graph.mutable_node());
    for (int i : order) *graph.add_node() = std::move(*nodes.Mutable(i));
}

} // namespace kestrel::onnx_import
