#include "frontend/onnx/float16_model.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "core/half.h"

namespace kestrel::onnx_import {

namespace {

constexpr int kFloat16 = onnx::TensorProto::FLOAT16, kFloat = onnx::TensorProto::FLOAT;
const char* const kWideSuffix = " (float32)"; // the float32 twin of a float16 input or output
const char* const kHalfSuffix = " (float16)"; // a value rounded to float16 by the model's Cast

// An inline float16 tensor's values as float32; false when its data is external.
bool widen_tensor(onnx::TensorProto& t)
{
    if (t.data_type() != kFloat16) return true;
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return false;
    std::vector<float> values;
    if (t.has_raw_data()) {
        const std::string& raw = t.raw_data();
        for (size_t i = 0; i + 1 < raw.size(); i += 2)
            values.push_back(half_to_float(static_cast<uint16_t>(static_cast<uint8_t>(raw[i]) |
                                                                 static_cast<uint8_t>(raw[i + 1]) << 8)));
    } else {
        for (int32_t bits : t.int32_data()) values.push_back(half_to_float(static_cast<uint16_t>(bits)));
    }
    std::string raw(values.size() * sizeof(float), '\0');
    if (!values.empty()) std::memcpy(raw.data(), values.data(), raw.size()); // little-endian, as ONNX stores it
    t.clear_int32_data();
    t.set_data_type(kFloat);
    t.set_raw_data(raw);
    return true;
}

void widen_type(onnx::TypeProto& type)
{
    if (type.has_tensor_type() && type.tensor_type().elem_type() == kFloat16)
        type.mutable_tensor_type()->set_elem_type(kFloat);
    if (type.has_sequence_type()) widen_type(*type.mutable_sequence_type()->mutable_elem_type());
    if (type.has_optional_type()) widen_type(*type.mutable_optional_type()->mutable_elem_type());
}

bool is_float16(const onnx::TypeProto& type)
{
    return type.has_tensor_type() && type.tensor_type().elem_type() == kFloat16;
}

bool is_graph_input(const onnx::GraphProto& g, const std::string& name)
{
    for (const auto& v : g.input())
        if (v.name() == name) return true;
    return false;
}

bool is_initializer(const onnx::GraphProto& g, const std::string& name)
{
    for (const auto& t : g.initializer())
        if (t.name() == name) return true;
    return false;
}

bool declares(const onnx::GraphProto& g, const std::string& name)
{
    return is_graph_input(g, name) || is_initializer(g, name);
}

// Every read of `from` becomes a read of `to`, in subgraphs too (unless one
// declares a value of that name itself); outputs, initializers and value
// infos of that name are renamed when `values` is set.
void rename(onnx::GraphProto& g, const std::string& from, const std::string& to, bool values)
{
    for (onnx::NodeProto& node : *g.mutable_node()) {
        for (std::string& in : *node.mutable_input())
            if (in == from) in = to;
        for (std::string& out : *node.mutable_output())
            if (values && out == from) out = to;
        for (onnx::AttributeProto& a : *node.mutable_attribute()) {
            if (a.has_g() && !declares(a.g(), from)) rename(*a.mutable_g(), from, to, false);
            for (onnx::GraphProto& sub : *a.mutable_graphs())
                if (!declares(sub, from)) rename(sub, from, to, false);
        }
    }
    if (!values) return;
    for (onnx::TensorProto& t : *g.mutable_initializer())
        if (t.name() == from) t.set_name(to);
    for (onnx::ValueInfoProto& v : *g.mutable_value_info())
        if (v.name() == from) v.set_name(to);
}

onnx::NodeProto cast(const std::string& from, const std::string& to, int type)
{
    onnx::NodeProto node;
    node.set_op_type("Cast");
    node.set_name(to + " (cast)");
    node.add_input(from);
    node.add_output(to);
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(type);
    return node;
}

bool is_cast_to_float16(const onnx::NodeProto& node)
{
    if (node.op_type() != "Cast" || (!node.domain().empty() && node.domain() != "ai.onnx")) return false;
    for (const auto& a : node.attribute())
        if (a.name() == "to") return a.i() == kFloat16;
    return false;
}

void widen_graph(onnx::GraphProto& g, bool top);

// Attribute tensors and float16 dtypes of a node; its subgraphs.
void widen_attributes(onnx::NodeProto& node)
{
    for (onnx::AttributeProto& a : *node.mutable_attribute()) {
        if (a.has_t()) widen_tensor(*a.mutable_t());
        for (onnx::TensorProto& t : *a.mutable_tensors()) widen_tensor(t);
        if (a.name() == "dtype" && a.type() == onnx::AttributeProto::INT && a.i() == kFloat16) a.set_i(kFloat);
        if (a.has_g()) widen_graph(*a.mutable_g(), false);
        for (onnx::GraphProto& sub : *a.mutable_graphs()) widen_graph(sub, false);
    }
}

void widen_graph(onnx::GraphProto& g, bool top)
{
    std::vector<onnx::NodeProto> nodes;
    // External float16 initializers stay as stored, behind a cast.
    for (onnx::TensorProto& t : *g.mutable_initializer())
        if (!widen_tensor(t)) {
            const std::string name = t.name();
            rename(g, name, name + kHalfSuffix, true);
            nodes.push_back(cast(name + kHalfSuffix, name, kFloat));
        }
    for (onnx::ValueInfoProto& v : *g.mutable_value_info()) widen_type(*v.mutable_type());
    // Top level: float16 inputs and outputs keep their type, read and written through casts.
    std::vector<onnx::NodeProto> outputs;
    for (onnx::ValueInfoProto& v : *g.mutable_input()) {
        if (!top) widen_type(*v.mutable_type());
        if (!top || !is_float16(v.type()) || is_initializer(g, v.name())) continue;
        rename(g, v.name(), v.name() + kWideSuffix, false);
        nodes.push_back(cast(v.name(), v.name() + kWideSuffix, kFloat));
    }
    for (onnx::ValueInfoProto& v : *g.mutable_output()) {
        if (!top) widen_type(*v.mutable_type());
        if (!top || !is_float16(v.type()) || is_graph_input(g, v.name())) continue;
        rename(g, v.name(), v.name() + kWideSuffix, true);
        outputs.push_back(cast(v.name() + kWideSuffix, v.name(), kFloat16));
    }
    for (onnx::NodeProto& node : *g.mutable_node()) {
        widen_attributes(node);
        if (!is_cast_to_float16(node)) {
            nodes.push_back(std::move(node));
            continue;
        }
        // The model's rounding to float16, then back to float32.
        const std::string out = node.output(0);
        node.set_output(0, out + kHalfSuffix);
        nodes.push_back(std::move(node));
        nodes.push_back(cast(out + kHalfSuffix, out, kFloat));
    }
    g.clear_node();
    for (onnx::NodeProto& node : nodes) *g.add_node() = std::move(node);
    for (onnx::NodeProto& node : outputs) *g.add_node() = std::move(node);
}

} // namespace

void compute_float16_in_float32(onnx::ModelProto& model) { widen_graph(*model.mutable_graph(), true); }

} // namespace kestrel::onnx_import
