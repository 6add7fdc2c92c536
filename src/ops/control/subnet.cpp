#include "ops/control/subnet.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "graph/graph.h"
#include "ops/common/op_util.h"
#include "ops/common/tensor_util.h"
#include "runtime/analysis.h"

namespace kestrel::subnet {

namespace {

// Bounds the recursion of nested loads (each level a parse on the stack); as
// deep as the ONNX importer's default (OnnxImportOptions::max_nesting_depth).
constexpr int kMaxNesting = 64;

} // namespace

std::shared_ptr<const Net> load(WeightReader& wr, int param_bytes, int bin_bytes, const std::string& where,
                                const std::string& which)
{
    thread_local int depth = 0;
    check(depth < kMaxNesting, "sub-networks nested deeper than ", kMaxNesting);
    struct Level {
        Level() { ++depth; }
        ~Level() { --depth; }
    } level;
    const Tensor text = wr.load_typed({param_bytes}, DType::U8);
    const Tensor bin = wr.load_typed({bin_bytes}, DType::U8);
    const std::string param(static_cast<const char*>(text.raw()), static_cast<size_t>(param_bytes));
    check(param.find('\0') == std::string::npos, "the ", which,
          " sub-network's .param text holds zero bytes (were the weights loaded?)");
    auto net = std::make_shared<Net>();
    net->load_param_mem(param, where + " " + which);
    if (net->needs_weights()) net->load_model_mem(bin.raw(), static_cast<size_t>(bin_bytes), where + " " + which);
    return net;
}

std::vector<TensorDesc> outputs(const Net& net, const std::vector<TensorDesc>& inputs)
{
    const std::vector<std::string> names = net.input_names();
    check(names.size() == inputs.size(), "the sub-network reads ", names.size(), " values, given ", inputs.size());
    std::map<std::string, TensorDesc> by_name;
    for (size_t i = 0; i < names.size(); ++i) by_name[names[i]] = inputs[i];
    const ModelReport report = analyze_model(net, by_name);
    const Graph& g = net.graph();
    for (const LayerReport& l : report.layers)
        for (size_t t = 0; t < l.outputs.size(); ++t) by_name[g.blobs[g.layers[l.layer].tops[t]].name] = l.outputs[t];
    std::vector<TensorDesc> out;
    for (const std::string& name : net.output_names()) {
        const auto it = by_name.find(name);
        check(it != by_name.end(), "sub-network output '", name, "' has no inferred shape");
        out.push_back(it->second);
    }
    return out;
}

std::vector<Tensor> run(Session& session, const Net& net, const std::vector<Tensor>& inputs)
{
    const std::vector<std::string> names = net.input_names();
    for (size_t i = 0; i < names.size(); ++i) session.set_input(names[i], inputs[i]);
    return session.run(net.output_names());
}

std::unique_ptr<Session> session_for(const Net& net, const PrepareContext& ctx)
{
    Options options;
    options.threads = ctx.threads();
    return std::make_unique<Session>(net, options);
}

namespace {

struct BodySession : OpState {
    std::unique_ptr<Session> session;
};

} // namespace

std::unique_ptr<OpState> BodyOp::prepare(const std::vector<TensorDesc>&, const std::vector<TensorDesc>&,
                                         PrepareContext& ctx) const
{
    auto state = std::make_unique<BodySession>();
    state->session = session_for(body(), ctx);
    return state;
}

void BodyOp::load_body_lengths(const ParamDict& pd)
{
    for (int i = 0; i < 2; ++i) {
        lengths_[i] = pd.get_int(i, -1);
        check(lengths_[i] >= 0, "param ", i, " (the body's byte length) must be given and >= 0");
    }
    check(lengths_[0] > 0, "the body needs a .param text (param 0)");
}

void BodyOp::load_body(WeightReader& wr, const std::string& which)
{
    body_ = load(wr, lengths_[0], lengths_[1], where(), which);
}

const Net& BodyOp::body() const
{
    check(body_ != nullptr, "the body comes with the weights: load the .bin first");
    return *body_;
}

Session& BodyOp::session(const ExecContext& ctx) const { return *ctx.state_as<BodySession>().session; }

namespace {

Shape with_axis(Shape shape, int axis, int64_t length)
{
    check(axis >= 0 && axis <= static_cast<int>(shape.size()), "axis ", axis, " is out of range for ", shape_str(shape));
    shape.insert(shape.begin() + axis, length);
    return shape;
}

} // namespace

Tensor slice_at(const Tensor& x, int axis, int64_t index)
{
    Shape without = x.shape();
    check(axis >= 0 && axis < x.rank(), "axis ", axis, " is out of range for ", shape_str(without));
    without.erase(without.begin() + axis);
    return nd::axis_range(x, axis, index, 1).reshaped(without);
}

void put_slice(Tensor& y, int axis, int64_t index, const Tensor& slice)
{
    nd::put_axis_range(y, axis, index, slice.reshaped(with_axis(slice.shape(), axis, 1)));
}

Tensor stack(const std::vector<Tensor>& values, int axis, bool reversed, const TensorDesc& none)
{
    Shape shape = values.empty() ? none.shape : values[0].shape();
    const DType dtype = values.empty() ? none.dtype : values[0].dtype();
    for (int64_t& d : shape) d = std::max<int64_t>(d, 0);
    check(axis >= 0 && axis <= static_cast<int>(shape.size()), "axis ", axis, " is out of range for stacking ",
          shape_str(shape));
    shape.insert(shape.begin() + axis, static_cast<int64_t>(values.size()));
    Tensor y(shape, dtype);
    const int64_t n = static_cast<int64_t>(values.size());
    for (int64_t i = 0; i < n; ++i) put_slice(y, axis, reversed ? n - 1 - i : i, values[static_cast<size_t>(i)]);
    return y;
}

bool scalar_truth(const Tensor& t, const char* what)
{
    check(t.numel() == 1, what, " must have one element, got ", shape_str(t.shape()));
    return t.to(DType::F64).data<double>()[0] != 0.0;
}

} // namespace kestrel::subnet
