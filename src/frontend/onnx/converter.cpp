#include "frontend/onnx/converter.h"

#include "frontend/common/unsupported_ops.h"
#include "frontend/onnx/float16_model.h"
#include "frontend/onnx/graph_walk.h"
#include "frontend/onnx/qdq_fusion.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "core/dtype_dispatch.h"
#include "kestrel/model_file.h"
#include "kestrel/onnx.h"
#include "onnx/checker.h"
#include "frontend/onnx/onnx_tensor.h"
#include "frontend/onnx/safe_shape_inference.h"

namespace kestrel::onnx_import {

// ---- helpers -----------------------------------------------------------------

ParamDict params_with_ints(int id, const std::vector<int64_t>& values, const std::string& what)
{
    std::vector<int> v;
    for (int64_t x : values) {
        kestrel::check(x >= INT32_MIN && x <= INT32_MAX, what, " value ", x, " does not fit in 32 bits");
        v.push_back(static_cast<int>(x));
    }
    ParamDict pd;
    pd.set_ints(id, v);
    return pd;
}

std::vector<int64_t> tensor_to_int64s(const Tensor& t)
{
    std::vector<int64_t> v;
    visit_dtype(t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t i = 0; i < t.numel(); ++i) v.push_back(convert_value<int64_t>(t.data<T>()[i]));
    });
    return v;
}

std::vector<float> tensor_to_floats(const Tensor& t)
{
    std::vector<float> v;
    visit_dtype(t.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t i = 0; i < t.numel(); ++i) v.push_back(convert_value<float>(t.data<T>()[i]));
    });
    return v;
}

Tensor scalar_tensor(float v)
{
    Tensor t(Shape{}, DType::F32);
    *t.data<float>() = v;
    return t;
}

Tensor int64_tensor(const std::vector<int64_t>& values)
{
    Tensor t({static_cast<int64_t>(values.size())}, DType::I64);
    std::copy(values.begin(), values.end(), t.data<int64_t>());
    return t;
}

const std::map<std::string, NodeConverter>& converter_table()
{
    static const std::map<std::string, NodeConverter> table = [] {
        std::map<std::string, NodeConverter> m;
        for (auto family : {basic_converters, nn_converters, tensor_converters, extra_converters, elementwise_converters,
                            norms_converters, seqmisc_converters, losses_converters, convpool_converters,
                            quantized_converters, control_converters, sequence_converters,
                            training_converters})
            for (const ConverterEntry& e : family()) m[e.op_type] = e.convert;
        return m;
    }();
    return table;
}

// ---- NodeContext -------------------------------------------------------------

NodeContext::NodeContext(ModelConverter& model, const onnx::NodeProto& node, int index, int opset)
    : model_(model), node_(node), opset_(opset)
{
    name_ = ModelConverter::blob_name(node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name());
}

std::string NodeContext::where() const
{
    return "node '" + node_.name() + "' (" + node_.op_type() + ", opset " + std::to_string(opset_) + ")";
}

std::string NodeContext::input(int i)
{
    check(has_input(i), "input ", i, " is missing");
    return model_.ensure_blob(node_.input(i), where());
}

const Tensor* NodeContext::constant(int i) const { return has_input(i) ? model_.constant(node_.input(i)) : nullptr; }

int NodeContext::input_rank(int i) const
{
    const Shape* s = input_shape(i);
    return s ? static_cast<int>(s->size()) : -1;
}

const Shape* NodeContext::input_shape(int i) const
{
    thread_local Shape shape;
    if (!has_input(i)) return nullptr;
    if (const Tensor* c = constant(i)) {
        shape = c->shape();
        return &shape;
    }
    const onnx::TypeProto* t = model_.type_of(node_.input(i));
    if (!t || !t->has_tensor_type() || !t->tensor_type().has_shape()) return nullptr;
    shape.clear();
    for (const auto& d : t->tensor_type().shape().dim()) shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
    return &shape;
}

const onnx::TypeProto* NodeContext::type_of(const std::string& onnx_name) const { return model_.type_of(onnx_name); }

const DType* NodeContext::input_dtype(int i) const
{
    thread_local DType dtype;
    if (!has_input(i)) return nullptr;
    if (const Tensor* c = constant(i)) {
        dtype = c->dtype();
        return &dtype;
    }
    const onnx::TypeProto* t = model_.type_of(node_.input(i));
    if (!t || !t->has_tensor_type() || t->tensor_type().elem_type() == 0) return nullptr;
    try {
        dtype = dtype_from_onnx(t->tensor_type().elem_type(), node_.input(i));
    } catch (const Error&) {
        return nullptr;
    }
    return &dtype;
}

std::string NodeContext::output(int i) const
{
    check(has_output(i), "output ", i, " is missing");
    return ModelConverter::blob_name(node_.output(i));
}

namespace {
const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name)
{
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}
} // namespace

bool NodeContext::has_attr(const std::string& name) const { return find_attr(node_, name) != nullptr; }

int64_t NodeContext::attr_int(const std::string& name, int64_t def) const
{
    const auto* a = find_attr(node_, name);
    if (!a) return def;
    check(a->type() == onnx::AttributeProto::INT, "attribute '", name, "' must be an int");
    return a->i();
}

float NodeContext::attr_float(const std::string& name, float def) const
{
    const auto* a = find_attr(node_, name);
    if (!a) return def;
    if (a->type() == onnx::AttributeProto::INT) return static_cast<float>(a->i());
    check(a->type() == onnx::AttributeProto::FLOAT, "attribute '", name, "' must be a float");
    return a->f();
}

std::vector<int64_t> NodeContext::attr_ints(const std::string& name) const
{
    const auto* a = find_attr(node_, name);
    if (!a) return {};
    check(a->type() == onnx::AttributeProto::INTS, "attribute '", name, "' must be a list of ints");
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::vector<float> NodeContext::attr_floats(const std::string& name) const
{
    const auto* a = find_attr(node_, name);
    if (!a) return {};
    check(a->type() == onnx::AttributeProto::FLOATS, "attribute '", name, "' must be a list of floats");
    return std::vector<float>(a->floats().begin(), a->floats().end());
}

std::string NodeContext::attr_string(const std::string& name, const std::string& def) const
{
    const auto* a = find_attr(node_, name);
    if (!a) return def;
    check(a->type() == onnx::AttributeProto::STRING, "attribute '", name, "' must be a string");
    return a->s();
}

Tensor NodeContext::attr_tensor(const std::string& name) const
{
    const auto* a = find_attr(node_, name);
    check(a && a->type() == onnx::AttributeProto::TENSOR, "attribute '", name, "' must be a tensor");
    return tensor_from_onnx(a->t(), model_.base_dir());
}

void NodeContext::emit(const std::string& type, const std::vector<std::string>& bottoms,
                       const std::vector<std::string>& tops, const ParamDict& params, const std::vector<Tensor>& weights)
{
    const std::string layer_name = emitted_ == 0 ? name_ : name_ + "#" + std::to_string(emitted_);
    ++emitted_;
    try {
        model_.builder().add_layer(type, layer_name, bottoms, tops, params, weights);
    } catch (const Error& e) {
        fail(e.what());
    }
}

void NodeContext::set_constant_output(int i, const Tensor& value) { model_.builder().set_constant(node_.output(i), value); }

std::string NodeContext::temp(const std::string& suffix) { return model_.builder().unique_blob(name_ + "/" + suffix); }

std::string NodeContext::constant_name(const Tensor& value, const std::string& suffix)
{
    const std::string name = temp(suffix);
    model_.builder().set_constant(name, value);
    return name;
}

void NodeContext::share_input_type(int i, const std::string& name)
{
    if (const onnx::TypeProto* t = has_input(i) ? model_.type_of(node_.input(i)) : nullptr) model_.set_type(name, *t);
}

std::string NodeContext::outer_blob(const std::string& onnx_name) { return model_.ensure_blob(onnx_name, where()); }

Net NodeContext::convert_subgraph(const onnx::GraphProto& graph, const std::vector<std::string>& captured,
                                  const std::string& what)
{
    return model_.convert_subgraph(graph, captured, what, where());
}

void NodeContext::convert_stand_in(onnx::NodeProto stand_in)
{
    const auto it = converter_table().find(stand_in.op_type());
    check(it != converter_table().end(), "no converter for the stand-in ", stand_in.op_type());
    convert_stand_in(std::move(stand_in), it->second);
}

void NodeContext::convert_stand_in(onnx::NodeProto stand_in, void (*convert)(NodeContext&))
{
    // Named after this node; the second and later stand-ins numbered.
    stand_in.set_name(name_ + "/" + stand_in.op_type() + (stand_ins_ > 0 ? "_" + std::to_string(stand_ins_) : ""));
    ++stand_ins_;
    NodeContext sub(model_, stand_in, 0, opset_);
    convert(sub);
}

// ---- ModelConverter ----------------------------------------------------------

ModelConverter::ModelConverter(const onnx::ModelProto& model, std::string base_dir, std::string source, Net& net)
    : model_(model), base_dir_(std::move(base_dir)), source_(std::move(source)), builder_(net, source_)
{
    for (const auto& op : model.opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") opset_ = static_cast<int>(op.version());
    // A model of other domains only (training optimizers, say) needs none; its default-domain nodes would.
    kestrel::check(opset_ >= 1 || model.opset_import_size() > 0, source_, ": the model imports no opset");
    kestrel::check(opset_ <= 18, source_, ": opset ", opset_, " is newer than supported (7-18)");
}

const onnx::TypeProto* ModelConverter::type_of(const std::string& onnx_name) const
{
    auto it = types_.find(onnx_name);
    return it == types_.end() ? nullptr : &it->second;
}

// The subgraph as a model of its own: the outer values it reads become graph
// inputs typed as the outer scope knows them (dims left symbolic: a branch
// must take whatever the outer graph produces at run time).
Net ModelConverter::convert_subgraph(const onnx::GraphProto& graph, const std::vector<std::string>& captured,
                                     const std::string& what, const std::string& where)
{
    // Their count and depth were bounded before conversion (check_model_limits).
    onnx::ModelProto sub;
    sub.set_ir_version(model_.ir_version());
    *sub.mutable_opset_import() = model_.opset_import();
    *sub.mutable_graph() = graph;
    for (const std::string& name : captured) {
        onnx::ValueInfoProto* in = sub.mutable_graph()->add_input();
        in->set_name(name);
        auto* tt = in->mutable_type()->mutable_tensor_type();
        int rank = -1;
        if (const onnx::TypeProto* t = type_of(name); t && (t->has_sequence_type() || t->has_optional_type())) {
            *in->mutable_type() = *t;
            continue;
        }
        if (const Tensor* c = constant(name)) {
            tt->set_elem_type(onnx_type_from_dtype(c->dtype()));
            rank = static_cast<int>(c->shape().size());
        } else if (const onnx::TypeProto* t = type_of(name); t && t->has_tensor_type() && t->tensor_type().elem_type()) {
            tt->set_elem_type(t->tensor_type().elem_type());
            if (t->tensor_type().has_shape()) rank = t->tensor_type().shape().dim_size();
        } else {
            fail(where, ": the type of '", name, "', read by the ", what, ", is unknown");
        }
        if (rank >= 0) tt->mutable_shape();
        for (int d = 0; d < rank; ++d) tt->mutable_shape()->add_dim()->set_dim_param(name + "_" + std::to_string(d));
    }
    // Values a nested subgraph reads need types from inside this one; other
    // branches convert without hints (and without the cost of a forked inference).
    if (std::any_of(graph.node().begin(), graph.node().end(), [](const auto& n) { return has_subgraphs(n); }))
        infer_shapes_safely(sub, what + " of " + where);
    Net net;
    net.set_load_options(builder_.net().load_options());
    ModelConverter converter(sub, base_dir_, what + " of " + where, net);
    converter.convert();
    net.optimize(converter.shape_hints());
    return net;
}

namespace {

// Whether the graph never reads the values of `name`: nothing reads it, or
// only CastLike's `like` (its dtype); nested graphs, which may read it, count
// as readers.
bool values_unread(const onnx::GraphProto& g, const std::string& name)
{
    for (const auto& out : g.output())
        if (out.name() == name) return false;
    for (const auto& node : g.node()) {
        if (has_subgraphs(node)) return false;
        for (int i = 0; i < node.input_size(); ++i)
            if (node.input(i) == name && (node.op_type() != "CastLike" || i != 1)) return false;
    }
    return true;
}

} // namespace

void ModelConverter::add_graph_inputs()
{
    const onnx::GraphProto& g = model_.graph();
    for (const auto& in : g.input()) {
        if (builder_.constant(in.name())) continue; // older exporters list initializers as inputs
        if (in.type().has_sequence_type() || in.type().has_optional_type()) { // Tensor::sequence / optional
            ParamDict pd;
            pd.set_int(21, static_cast<int>(in.type().has_sequence_type() ? DType::Sequence : DType::Optional));
            builder_.add_layer("Input", blob_name(in.name()), {}, {blob_name(in.name())}, pd, {});
            continue;
        }
        const auto& tt = in.type().tensor_type();
        kestrel::check(in.type().has_tensor_type(), source_, ": graph input '", in.name(), "' is not a tensor");
        ParamDict pd;
        std::vector<int> dims;
        for (const auto& d : tt.shape().dim()) dims.push_back(d.has_dim_value() ? static_cast<int>(d.dim_value()) : -1);
        // No shape: any rank. Nor is the shape of a value nothing reads checked (CastLike's `like`).
        if (tt.has_shape() && !values_unread(g, in.name())) pd.set_ints(20, dims);
        pd.set_int(21, static_cast<int>(dtype_from_onnx(tt.elem_type(), "graph input '" + in.name() + "'")));
        const std::string name = blob_name(in.name());
        builder_.add_layer("Input", name, {}, {name}, pd, {});
    }
}

// ONNX Runtime's contrib ops we take are in the table as com.microsoft.<type>.
std::string ModelConverter::table_key(const onnx::NodeProto& node)
{
    const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
    return standard ? node.op_type() : node.domain() + "." + node.op_type();
}

// Every node of this graph no converter takes, in one error.
void ModelConverter::check_operators_supported()
{
    const onnx::GraphProto& g = model_.graph();
    const auto& table = converter_table();
    UnsupportedOperators unsupported;
    for (int i = 0; i < g.node_size(); ++i) {
        const onnx::NodeProto& node = g.node(i);
        const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
        const NodeContext ctx(*this, node, i, opset_);
        const std::string where = ctx.where();
        if (standard && opset_ < 1) fail(source_, ": ", where, ": the model imports no default-domain opset");
        if (table.count(table_key(node))) continue;
        unsupported.add("node " + std::to_string(i), node.op_type(), ctx.name(),
                        standard ? source_ + ": " + where + ": unsupported operator type '" + node.op_type() + "'"
                                 : source_ + ": " + where + ": operator '" + node.op_type() + "' of domain '" +
                                       node.domain() + "' is not supported");
    }
    unsupported.raise_if_any("unsupported operators");
}

void ModelConverter::convert()
{
    const onnx::GraphProto& g = model_.graph();
    for (const auto& init : g.initializer()) builder_.set_constant(init.name(), tensor_from_onnx(init, base_dir_));
    for (const auto& vi : g.value_info()) types_[vi.name()] = vi.type();
    for (const auto& vi : g.input()) types_[vi.name()] = vi.type();
    for (const auto& vi : g.output()) types_[vi.name()] = vi.type();
    add_graph_inputs();
    check_operators_supported();
    const auto& table = converter_table();
    for (int i = 0; i < g.node_size(); ++i) {
        const onnx::NodeProto& node = g.node(i);
        NodeContext ctx(*this, node, i, opset_);
        const auto it = table.find(table_key(node));
        try {
            it->second(ctx);
        } catch (const TooLargeError&) {
            throw;
        } catch (const Error& e) {
            const std::string msg = e.what();
            // Messages from NodeContext already carry the node; others get it here.
            if (msg.find(ctx.where()) != std::string::npos) fail(source_, ": ", msg);
            fail(source_, ": ", ctx.where(), ": ", msg);
        }
    }
    std::vector<std::string> outputs;
    for (const auto& out : g.output()) outputs.push_back(ensure_blob(out.name(), "graph output"));
    kestrel::check(!outputs.empty(), source_, ": the graph has no outputs");
    builder_.net().set_output_names(outputs);
}

std::map<std::string, Shape> ModelConverter::shape_hints() const
{
    std::map<std::string, Shape> hints;
    for (const auto& [name, type] : types_) {
        if (!type.has_tensor_type() || !type.tensor_type().has_shape()) continue;
        Shape shape;
        for (const auto& d : type.tensor_type().shape().dim()) shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
        hints[blob_name(name)] = shape;
    }
    return hints;
}

void stand_in(NodeContext& n, const std::string& op, std::vector<std::string> inputs,
              const std::vector<std::string>& outputs, const std::vector<int64_t>* axes)
{
    onnx::NodeProto node;
    node.set_op_type(op);
    const bool axes_as_input = n.opset() >= (op == "ReduceSum" ? 13 : 18);
    if (axes && axes_as_input) inputs.push_back(n.constant_name(int64_tensor(*axes), "axes"));
    for (const std::string& in : inputs) node.add_input(in);
    for (const std::string& out : outputs) node.add_output(out);
    if (axes && !axes_as_input) {
        onnx::AttributeProto* a = node.add_attribute();
        a->set_name("axes");
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : *axes) a->add_ints(v);
    }
    n.convert_stand_in(node);
}

std::string stand_in_value(NodeContext& n, const std::string& op, const std::vector<std::string>& inputs,
                           const char* what, const std::vector<int64_t>* axes)
{
    const std::string out = n.temp(what);
    stand_in(n, op, inputs, {out}, axes);
    return out;
}

} // namespace kestrel::onnx_import

namespace kestrel {

namespace {

void check_and_infer(onnx::ModelProto& model, const std::string& source, const OnnxImportOptions& options)
{
    onnx_import::check_model_limits(model, options, source);
    onnx_import::sort_nodes_topologically(*model.mutable_graph(), source);
    // ONNX's checker wants a shape on every graph input and output; ONNX
    // Runtime takes a tensor without one (its rank unknown), as writers that
    // leave it out expect: those get an empty shape while the checker runs.
    std::vector<onnx::TypeProto_Tensor*> shapeless;
    for (auto* values : {model.mutable_graph()->mutable_input(), model.mutable_graph()->mutable_output()})
        for (onnx::ValueInfoProto& v : *values)
            if (v.type().has_tensor_type() && !v.type().tensor_type().has_shape())
                shapeless.push_back(v.mutable_type()->mutable_tensor_type());
    for (onnx::TypeProto_Tensor* t : shapeless) t->mutable_shape();
    try {
        onnx::checker::check_model(model);
    } catch (const std::exception& e) {
        std::string msg = e.what();
        if (const size_t nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
        fail(source, ": invalid ONNX model: ", msg);
    }
    for (onnx::TypeProto_Tensor* t : shapeless) t->clear_shape();
    onnx_import::compute_float16_in_float32(model);
    onnx_import::infer_shapes_safely(model, source);
}

void convert_model(Net& net, onnx::ModelProto& model, const std::string& base_dir, const std::string& source,
                   const OnnxImportOptions& options)
{
    check_and_infer(model, source, options);
    if (options.optimize) onnx_import::fuse_qdq_nodes(*model.mutable_graph());
    // The graph keeps the weights while the optimizer rewrites it; dropped
    // after, when the Net's load options say so.
    const LoadOptions wanted = net.load_options();
    LoadOptions keep = wanted;
    keep.keep_loaded_weights = true;
    Net fresh;
    fresh.set_load_options(keep);
    onnx_import::ModelConverter converter(model, base_dir, source, fresh);
    converter.convert();
    fresh.set_source_name(source);
    if (options.optimize) fresh.optimize(converter.shape_hints());
    if (!wanted.keep_loaded_weights) fresh.release_weights();
    fresh.set_load_options(wanted);
    net = std::move(fresh);
}

} // namespace

void load_onnx_mem(Net& net, const void* data, size_t size, const std::string& source,
                   const std::string& external_data_dir, const OnnxImportOptions& options)
{
    check(size <= static_cast<size_t>(INT32_MAX), source, ": ONNX files over 2 GB must keep their weights as external data");
    onnx::ModelProto model;
    check(model.ParseFromArray(data, static_cast<int>(size)), source, ": not an ONNX model (protobuf parse failed)");
    convert_model(net, model, external_data_dir, source, options);
}

void load_onnx(Net& net, const std::string& path, const OnnxImportOptions& options)
{
    std::ifstream in(path, std::ios::binary);
    check(static_cast<bool>(in), path, ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    const size_t slash = path.find_last_of('/');
    load_onnx_mem(net, bytes.data(), bytes.size(), path, slash == std::string::npos ? "." : path.substr(0, slash), options);
}

void register_onnx_loader(const OnnxImportOptions& options)
{
    register_model_loader(ModelFormat::Onnx, [options](Net& net, const std::string& path, const ModelFileOptions& file) {
        check(file.weights.empty(), path, ": an ONNX model keeps its weights inside (or as external data beside it)");
        OnnxImportOptions o = options;
        o.optimize = file.optimize;
        load_onnx(net, path, o);
        return path;
    });
}

} // namespace kestrel
