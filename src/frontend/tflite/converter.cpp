#include "frontend/tflite/converter.h"

#include <algorithm>
#include <climits>

#include "frontend/common/axis_order.h"
#include "frontend/common/unsupported_ops.h"

namespace kestrel::tflite_import {

namespace {

constexpr int kFoldRank = 4; // NHWC values are held as NCHW
constexpr int64_t kIntLimit = int64_t(1) << 40;

std::vector<int> inverse(const std::vector<int>& perm)
{
    std::vector<int> inv(perm.size());
    for (size_t k = 0; k < perm.size(); ++k) inv[static_cast<size_t>(perm[k])] = static_cast<int>(k);
    return inv;
}

ParamDict permute_params(const std::vector<int>& perm)
{
    ParamDict pd;
    pd.set_ints(1, perm);
    return pd;
}

} // namespace

Tensor int64_tensor(const std::vector<int64_t>& values)
{
    Tensor t({static_cast<int64_t>(values.size())}, DType::I64);
    std::copy(values.begin(), values.end(), t.data<int64_t>());
    return t;
}

int checked_int(const OpContext& n, int64_t v, int64_t lo, int64_t hi, const char* what)
{
    n.check(v >= lo && v <= hi, what, " ", v, " is out of range [", lo, ", ", hi, "]");
    return static_cast<int>(v);
}

// --- OpContext ---

OpContext::OpContext(ModelConverter& model, const fb::Operator& op, int index)
    : model_(model), op_(op), index_(index), code_(model.file_.opcode(op, index))
{
    name_ = code_.name() + "_" + std::to_string(index);
}

std::string OpContext::where() const
{
    return "operator " + std::to_string(index_) + " (" + code_.name() + " v" + std::to_string(code_.version) + ")";
}

void OpContext::fail_here(const std::string& message) const { fail(model_.file_.source(), ": ", where(), ": ", message); }

int OpContext::num_inputs() const { return op_.inputs() ? static_cast<int>(op_.inputs()->size()) : 0; }
int OpContext::num_outputs() const { return op_.outputs() ? static_cast<int>(op_.outputs()->size()) : 0; }
bool OpContext::has_input(int k) const { return k < num_inputs() && op_.inputs()->Get(static_cast<flatbuffers::uoffset_t>(k)) >= 0; }

int OpContext::input_index(int k) const
{
    check(k >= 0 && k < num_inputs(), "has ", num_inputs(), " inputs, input ", k, " is needed");
    const int t = op_.inputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
    check(t >= 0, "optional input ", k, " is needed");
    model_.file_.tensor(t, where()); // range check
    return t;
}

int OpContext::output_index(int k) const
{
    check(k >= 0 && k < num_outputs(), "has ", num_outputs(), " outputs, output ", k, " is needed");
    const int t = op_.outputs()->Get(static_cast<flatbuffers::uoffset_t>(k));
    model_.file_.tensor(t, where());
    return t;
}

const TensorInfo& OpContext::in(int k) const { return model_.file_.tensors()[static_cast<size_t>(input_index(k))]; }
const TensorInfo& OpContext::out(int k) const { return model_.file_.tensors()[static_cast<size_t>(output_index(k))]; }

const Tensor* OpContext::constant(int k) const
{
    if (!has_input(k)) return nullptr;
    return model_.constant(input_index(k));
}

Tensor OpContext::constant_f32(int k, const char* what) const
{
    const Tensor* c = constant(k);
    check(c != nullptr, what, " (input ", k, ") must be a constant");
    const TensorInfo& info = in(k);
    // Quantized weights read by a float operator (dynamic-range models): their real values.
    if (info.quant.present() && c->dtype() == info.dtype && (info.dtype == DType::I8 || info.dtype == DType::U8))
        return dequantized(*this, *c, info.quant);
    return c->to(DType::F32);
}

std::vector<int64_t> OpContext::constant_ints(int k, const char* what) const
{
    const Tensor* c = constant(k);
    check(c != nullptr, what, " (input ", k, ") must be a constant");
    check(!dtype_is_float(c->dtype()), what, " (input ", k, ") must hold integers, it is ", dtype_name(c->dtype()));
    const Tensor v = c->to(DType::I64);
    std::vector<int64_t> out(v.data<int64_t>(), v.data<int64_t>() + v.numel());
    // Shapes, sizes, axes and bounds: far from int64's ends, so sums of two never overflow.
    for (int64_t x : out) check(x > -kIntLimit && x < kIntLimit, what, " (input ", k, ") holds ", x, ", out of range");
    return out;
}

std::string OpContext::plain(int k) { return model_.plain_blob(input_index(k)); }

std::string OpContext::folded(int k)
{
    check(rank(k) == kFoldRank, "input ", k, " must have rank 4 (NHWC), it has shape ", shape_str(in(k).shape));
    return model_.folded_blob(input_index(k));
}

bool OpContext::is_folded(int k) const
{
    if (!has_input(k)) return false;
    return !model_.values_[static_cast<size_t>(input_index(k))].folded.empty();
}

bool OpContext::prefer_folded() const
{
    for (int k = 0; k < num_inputs(); ++k)
        if (has_input(k) && rank(k) == kFoldRank && is_folded(k)) return true;
    return false;
}

std::string OpContext::operand(int k, bool folded_form)
{
    if (!folded_form) return plain(k);
    const int r = rank(k);
    if (r == kFoldRank) return folded(k);
    const Shape& s = in(k).shape;
    check(r < kFoldRank, "input ", k, " of rank ", r, " cannot broadcast against a rank-4 value");
    if (shape_numel(s) == 1) return plain(k); // one value broadcasts alike in either order
    Shape padded(static_cast<size_t>(kFoldRank - r), 1);
    padded.insert(padded.end(), s.begin(), s.end());
    if (const Tensor* c = constant(k))
        return constant_blob(to_engine_order(AxisOrder::ChannelsLast, c->reshaped(padded)), in(k).name + "_nchw");
    const std::string expanded = temp(in(k).name + "_4d");
    emit("Reshape", {plain(k), constant_blob(int64_tensor(padded), "shape")}, {expanded});
    const std::string out = temp(in(k).name + "_nchw");
    emit("Permute", {expanded}, {out}, permute_params(engine_permutation(AxisOrder::ChannelsLast, kFoldRank)));
    return out;
}

int OpContext::axis_in(int axis, int rank, bool folded_form)
{
    if (axis < 0) axis += rank;
    return folded_form ? engine_axis(AxisOrder::ChannelsLast, rank, axis) : axis;
}

std::string OpContext::output(int k, bool folded_form)
{
    const int t = output_index(k);
    ModelConverter::Value& v = model_.values_[static_cast<size_t>(t)];
    check(v.plain.empty() && v.folded.empty() && !model_.constants_.count(t), "output ", k, " '", out(k).name,
          "' is already written by an earlier operator");
    if (!folded_form) return v.plain = GraphBuilder::blob_name(out(k).name);
    check(out(k).shape.size() == kFoldRank, "output ", k, " must have rank 4 (NHWC), it has shape ",
          shape_str(out(k).shape));
    return v.folded = model_.fresh_name(out(k).name + "_nchw");
}

bool OpContext::output_read_only_by(int k, const std::string& custom) const
{
    const int t = output_index(k);
    const fb::SubGraph& g = model_.file_.graph();
    for (int o : *g.outputs())
        if (o == t) return false;
    const auto* ops = g.operators();
    for (flatbuffers::uoffset_t i = 0; ops && i < ops->size(); ++i) {
        const fb::Operator& op = *ops->Get(i);
        if (!op.inputs() || std::find(op.inputs()->begin(), op.inputs()->end(), t) == op.inputs()->end()) continue;
        if (model_.file_.opcode(op, static_cast<int>(i)).custom != custom) return false;
    }
    return true;
}

void OpContext::set_constant_output(int k, const Tensor& value) { model_.constants_[output_index(k)] = value; }

void OpContext::emit(const std::string& type, const std::vector<std::string>& bottoms,
                     const std::vector<std::string>& tops, const ParamDict& params, const std::vector<Tensor>& weights)
{
    const std::string name = layers_ == 0 ? name_ : name_ + "_" + std::to_string(layers_);
    ++layers_;
    model_.builder_.add_layer(type, name, bottoms, tops, params, weights);
}

std::string OpContext::temp(const std::string& what) { return model_.fresh_name(name_ + "_" + what); }

std::string OpContext::constant_blob(const Tensor& value, const std::string& what)
{
    const std::string name = temp(what);
    model_.builder_.set_constant(name, value);
    return model_.builder_.ensure_blob(name, where());
}

std::string OpContext::activation(const std::string& x, fb::ActivationFunctionType act, const std::string& to)
{
    // TFLite's kernels apply a fused activation as a clamp: TANH and SIGN_BIT
    // have none, so TFLite leaves the values as they are, and so do we.
    if (act == fb::ActivationFunctionType::TANH || act == fb::ActivationFunctionType::SIGN_BIT)
        act = fb::ActivationFunctionType::NONE;
    if (act == fb::ActivationFunctionType::NONE) {
        if (!to.empty() && to != x) emit("Noop", {x}, {to});
        return to.empty() ? x : to;
    }
    const std::string y = to.empty() ? temp("act") : to;
    ParamDict pd;
    switch (act) {
    case fb::ActivationFunctionType::RELU: emit("ReLU", {x}, {y}); break;
    case fb::ActivationFunctionType::RELU6:
    case fb::ActivationFunctionType::RELU_N1_TO_1:
        pd.set_float(0, act == fb::ActivationFunctionType::RELU6 ? 0.f : -1.f);
        pd.set_float(1, act == fb::ActivationFunctionType::RELU6 ? 6.f : 1.f);
        emit("Clip", {x}, {y}, pd);
        break;
    default: fail_here("fused activation " + std::string(fb::EnumNameActivationFunctionType(act)) + " is not supported");
    }
    return y;
}

GraphBuilder& OpContext::builder() { return model_.builder_; }

void OpContext::check_size(const Shape& shape, DType dtype, const std::string& what) const
{
    model_.file_.check_size(shape, dtype, where() + ": " + what);
}

// --- ModelConverter ---

ModelConverter::ModelConverter(const TfliteFile& file, Net& net) : file_(file), builder_(net, file.source())
{
    add_conv_converters(builtins_, customs_);
    add_elementwise_converters(builtins_);
    add_shape_converters(builtins_);
    add_reduce_converters(builtins_);
    values_.resize(file.tensors().size());
    for (const TensorInfo& t : file.tensors()) file_names_.insert(GraphBuilder::blob_name(t.name));
}

std::string ModelConverter::fresh_name(const std::string& base)
{
    std::string name;
    do name = base + "_" + std::to_string(fresh_++);
    while (file_names_.count(name) || builder_.net().has_blob(name));
    file_names_.insert(name);
    return name;
}

const Tensor* ModelConverter::constant(int t)
{
    auto it = constants_.find(t);
    if (it != constants_.end()) return &it->second;
    const TensorInfo& info = file_.tensors()[static_cast<size_t>(t)];
    if (!info.data || !values_[static_cast<size_t>(t)].plain.empty()) return nullptr;
    return &(constants_[t] = file_.constant_values(t));
}

std::string ModelConverter::plain_blob(int t)
{
    Value& v = values_[static_cast<size_t>(t)];
    if (!v.plain.empty()) return v.plain;
    const TensorInfo& info = file_.tensors()[static_cast<size_t>(t)];
    const std::string name = GraphBuilder::blob_name(info.name);
    if (!v.folded.empty()) {
        builder_.add_layer("Permute", fresh_name(name + "_to_nhwc"), {v.folded}, {name},
                           permute_params(inverse(engine_permutation(AxisOrder::ChannelsLast, kFoldRank))));
        return v.plain = name;
    }
    const Tensor* c = constant(t);
    check(c != nullptr, file_.source(), ": tensor ", t, " '", info.name, "' is read before any operator writes it");
    builder_.set_constant(name, *c);
    return v.plain = builder_.ensure_blob(name, "tensor " + std::to_string(t));
}

std::string ModelConverter::folded_blob(int t)
{
    Value& v = values_[static_cast<size_t>(t)];
    if (!v.folded.empty()) return v.folded;
    const TensorInfo& info = file_.tensors()[static_cast<size_t>(t)];
    if (v.plain.empty())
        if (const Tensor* c = constant(t)) {
            const std::string name = fresh_name(info.name + "_nchw");
            builder_.set_constant(name, to_engine_order(AxisOrder::ChannelsLast, *c));
            return v.folded = builder_.ensure_blob(name, "tensor " + std::to_string(t));
        }
    const std::string plain = plain_blob(t);
    const std::string name = fresh_name(info.name + "_nchw");
    builder_.add_layer("Permute", name, {plain}, {name},
                       permute_params(engine_permutation(AxisOrder::ChannelsLast, kFoldRank)));
    return v.folded = name;
}

void ModelConverter::add_graph_inputs()
{
    const auto* inputs = file_.graph().inputs();
    check(inputs && inputs->size() > 0, file_.source(), ": the main subgraph has no inputs");
    for (int t : *inputs) {
        const TensorInfo& info = file_.tensor(t, "graph input");
        if (info.data) continue; // a constant listed as input
        ParamDict pd;
        std::vector<int> dims;
        const Shape& s = info.signature.empty() ? info.shape : info.signature;
        for (int64_t d : s) {
            check(d >= -1 && d <= INT32_MAX, file_.source(), ": graph input '", info.name, "' has dimension ", d);
            dims.push_back(static_cast<int>(d));
        }
        pd.set_ints(20, dims);
        pd.set_int(21, static_cast<int>(info.dtype));
        const std::string name = GraphBuilder::blob_name(info.name);
        builder_.add_layer("Input", name, {}, {name}, pd);
        values_[static_cast<size_t>(t)].plain = name;
    }
}

void ModelConverter::check_operators_supported() const
{
    const auto* ops = file_.graph().operators();
    UnsupportedOperators unsupported;
    for (flatbuffers::uoffset_t i = 0; ops && i < ops->size(); ++i) {
        check(ops->Get(i) != nullptr, file_.source(), ": operator ", i, " is missing");
        const TfliteFile::OpCode code = file_.opcode(*ops->Get(i), static_cast<int>(i));
        const bool known = code.custom.empty() ? builtins_.count(code.builtin) != 0 : customs_.count(code.custom) != 0;
        if (known) continue;
        const std::string what = code.custom.empty() ? "builtin operator " + code.name() : "custom operator '" + code.custom + "'";
        unsupported.add("operator " + std::to_string(i), code.name() + " v" + std::to_string(code.version), "",
                        file_.source() + ": operator " + std::to_string(i) + ": " + what + " (version " +
                            std::to_string(code.version) + ") is not supported");
    }
    unsupported.raise_if_any("unsupported operators");
    check_no_quantized_activations();
}

// Integer activations with quantization parameters (fully integer models)
// need TFLite's fixed-point arithmetic, which the converters do not give yet:
// refused by name rather than run as if their integers were real values.
void ModelConverter::check_no_quantized_activations() const
{
    const auto* ops = file_.graph().operators();
    for (flatbuffers::uoffset_t i = 0; ops && i < ops->size(); ++i) {
        const fb::Operator& op = *ops->Get(i);
        const TfliteFile::OpCode code = file_.opcode(op, static_cast<int>(i));
        if (code.builtin == fb::BuiltinOperator::DEQUANTIZE) continue; // reads int8 weights, writes float
        for (const auto* list : {op.inputs(), op.outputs()})
            for (flatbuffers::uoffset_t k = 0; list && k < list->size(); ++k) {
                const int t = list->Get(k);
                if (t < 0) continue;
                const TensorInfo& info = file_.tensor(t, "operator " + std::to_string(i));
                const bool integer = info.dtype == DType::I8 || info.dtype == DType::U8 || info.dtype == DType::I16;
                if (!integer || !info.quant.present() || info.data) continue;
                fail(file_.source(), ": operator ", i, " (", code.name(), " v", code.version, "): tensor '", info.name,
                     "' holds quantized ", dtype_name(info.dtype), " activations (scale ", info.quant.scale[0],
                     "): fully integer models are not supported yet (float, float16-weight and dynamic-range "
                     "models are)");
            }
    }
}

void ModelConverter::add_graph_outputs()
{
    const auto* outputs = file_.graph().outputs();
    check(outputs && outputs->size() > 0, file_.source(), ": the main subgraph has no outputs");
    std::vector<std::string> names;
    for (int t : *outputs) {
        file_.tensor(t, "graph output");
        names.push_back(plain_blob(t));
    }
    builder_.net().set_output_names(names);
}

void ModelConverter::convert()
{
    check(file_.model().subgraphs()->size() == 1, file_.source(), ": ", file_.model().subgraphs()->size(),
          " subgraphs: only models with one (no control flow) are supported");
    add_graph_inputs();
    check_operators_supported();
    const auto* ops = file_.graph().operators();
    for (flatbuffers::uoffset_t i = 0; ops && i < ops->size(); ++i) {
        OpContext ctx(*this, *ops->Get(i), static_cast<int>(i));
        const OpConverter& convert =
            ctx.code().custom.empty() ? builtins_.at(ctx.code().builtin) : customs_.at(ctx.code().custom);
        try {
            convert(ctx);
        } catch (const TooLargeError&) {
            throw;
        } catch (const Error& e) {
            const std::string msg = e.what();
            if (msg.find(ctx.where()) != std::string::npos) throw;
            fail(file_.source(), ": ", ctx.where(), ": ", msg);
        }
    }
    add_graph_outputs();
}

} // namespace kestrel::tflite_import
