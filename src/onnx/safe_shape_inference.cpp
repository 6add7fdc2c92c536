#include "onnx/safe_shape_inference.h"

#include <map>

#include "kestrel/error.h"
#include "onnx/shape_inference/implementation.h"

namespace kestrel::onnx_import {

namespace {

// Ops whose inference in libonnx reads dims at an attribute-given axis of
// input 0 without checking it against the rank. The attribute must lie in
// [-rank, rank); add an op here when fuzzing finds another one.
struct AxisCheckedOp {
    const char* op_type;
    const char* attribute;
    int64_t default_value;
};
const AxisCheckedOp kAxisCheckedOps[] = {{"LayerNormalization", "axis", -1}};

const AxisCheckedOp* axis_checked(const onnx::NodeProto& node)
{
    if (!node.domain().empty() && node.domain() != "ai.onnx") return nullptr;
    for (const AxisCheckedOp& op : kAxisCheckedOps)
        if (node.op_type() == op.op_type) return &op;
    return nullptr;
}

int64_t attribute_or(const onnx::NodeProto& node, const char* name, int64_t def)
{
    for (const auto& a : node.attribute())
        if (a.name() == name) return a.i();
    return def;
}

bool has_subgraphs(const onnx::GraphProto& graph)
{
    for (const auto& node : graph.node())
        for (const auto& a : node.attribute())
            if (a.has_g() || a.graphs_size() > 0) return true;
    return false;
}

// Ranks of every value a first, safe inference pass can type: the model with
// the risky nodes replaced by Identity of input 0 (only the rank of their
// input matters here) and large initializers stripped of their data (their
// type and dims stay; shape-computing constants are small and keep theirs).
std::map<std::string, int> ranks_before_risky_nodes(const onnx::ModelProto& model)
{
    onnx::ModelProto probe;
    *probe.mutable_opset_import() = model.opset_import();
    probe.set_ir_version(model.ir_version());
    onnx::GraphProto* g = probe.mutable_graph();
    const onnx::GraphProto& src = model.graph();
    g->set_name(src.name());
    *g->mutable_input() = src.input();
    *g->mutable_output() = src.output();
    *g->mutable_value_info() = src.value_info();
    for (const auto& init : src.initializer()) {
        onnx::TensorProto* t = g->add_initializer();
        int64_t n = 1;
        for (int64_t d : init.dims()) n *= d < 0 ? 0 : d;
        if (n <= 4096) {
            *t = init;
        } else {
            t->set_name(init.name());
            t->set_data_type(init.data_type());
            *t->mutable_dims() = init.dims();
        }
    }
    for (const auto& node : src.node()) {
        onnx::NodeProto* n = g->add_node();
        if (axis_checked(node) && node.input_size() > 0 && node.output_size() > 0) {
            n->set_op_type("Identity");
            n->add_input(node.input(0));
            n->add_output(node.output(0));
        } else {
            *n = node;
        }
    }
    try {
        onnx::shape_inference::InferShapes(probe);
    } catch (const std::exception&) {
    }
    std::map<std::string, int> ranks;
    const auto note = [&](const onnx::ValueInfoProto& v) {
        if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
            ranks[v.name()] = v.type().tensor_type().shape().dim_size();
    };
    for (const auto& v : g->input()) note(v);
    for (const auto& v : g->value_info()) note(v);
    for (const auto& v : g->output()) note(v);
    for (const auto& t : src.initializer()) ranks[t.name()] = t.dims_size();
    return ranks;
}

void check_axes(const onnx::ModelProto& model, const std::string& source)
{
    bool any = false;
    for (const auto& node : model.graph().node()) any = any || axis_checked(node);
    if (!any) return;
    const std::map<std::string, int> ranks = ranks_before_risky_nodes(model);
    for (const auto& node : model.graph().node()) {
        const AxisCheckedOp* op = axis_checked(node);
        if (op == nullptr || node.input_size() == 0) continue;
        const auto it = ranks.find(node.input(0));
        if (it == ranks.end()) continue; // rank unknown: libonnx's inference skips the node too
        const int64_t axis = attribute_or(node, op->attribute, op->default_value), rank = it->second;
        if (axis < -rank || axis >= rank)
            fail(source, ": node '", node.name(), "' (", node.op_type(), "): ", op->attribute, " ", axis,
                 " is out of range for an input of rank ", rank);
    }
}

} // namespace

void infer_shapes_safely(onnx::ModelProto& model, const std::string& source)
{
    // No converter handles If/Loop/Scan, whose bodies libonnx would infer
    // without the checks above: such models get no hints (they fail to
    // convert anyway, with an "unsupported operator" error).
    if (has_subgraphs(model.graph())) return;
    check_axes(model, source);
    try {
        onnx::shape_inference::InferShapes(model);
    } catch (const std::exception&) {
        // Shape inference only adds hints for converters; a model it cannot type still converts.
    }
}

} // namespace kestrel::onnx_import
