// Session: inputs set, blobs asked for; the plan for those inputs' shapes and
// the blobs asked for is made once (runtime/planner.cpp) and cached, then run
// (runtime/execute.cpp). Its parts: runtime/session_impl.h.
#include <algorithm>

#include "runtime/session_impl.h"

namespace kestrel {

Session::Session(const Net& net, const Options& options) : impl_(std::make_unique<Impl>())
{
    check(net.graph_ != nullptr, "Session: the net has no model loaded");
    check(net.weights_loaded_, net.graph_->source, ": the model has weights but none were loaded (load the .bin)");
    check(options.threads >= 1, "Session: threads must be >= 1");
    impl_->net = &net;
    impl_->graph = net.graph_.get();
    impl_->options = options;
    impl_->backend = make_device_backend(options);
    if (impl_->backend) impl_->options.blocked_layouts = false; // device kernels read plain blobs
    impl_->owned.resize(net.graph_->blobs.size());
}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;

void Session::set_input(const std::string& name, const Tensor& tensor)
{
    const Graph& g = *impl_->graph;
    const int b = g.find_blob(name);
    check(b >= 0, g.source, ": the model has no blob named '", name, "'");
    check(tensor.defined(), "set_input '", name, "': empty tensor");
    // Inputs that declare a dtype (21) or exact dims (20), as ONNX models do,
    // are checked here; ncnn Input params are only hints and are not enforced.
    const int producer = g.blobs[b].producer;
    const ParamDict* declared_by = producer >= 0 && g.layers[producer].type == "Input" ? &g.layers[producer].params : nullptr;
    Tensor given = tensor;
    if (declared_by && declared_by->has(21)) {
        const DType dtype = impl_->net->input_dtype(name);
        // numpy has no bfloat16: a bfloat16 input may come as its uint16 bits (as ONNX's test data stores it).
        if (dtype == DType::BF16 && given.dtype() == DType::U16) given = given.view_as(given.shape(), DType::BF16);
        // A value given for an optional input is one that holds it (Loop carries optionals so).
        if (dtype == DType::Optional && !given.is_optional()) given = Tensor::optional(given);
        check(given.dtype() == dtype, g.source, ": input '", name, "' must be ", dtype_name(dtype), ", got ",
              dtype_name(tensor.dtype()));
    }
    if (declared_by && declared_by->has(20)) {
        const Shape declared = impl_->net->input_shape(name);
        bool fits = declared.size() == tensor.shape().size();
        for (size_t i = 0; fits && i < declared.size(); ++i) fits = declared[i] < 0 || declared[i] == tensor.shape()[i];
        check(fits, g.source, ": input '", name, "' must have shape ", shape_str(declared), " (-1: any), got ",
              shape_str(tensor.shape()));
    }
    impl_->inputs[b] = given;
    impl_->results.clear();
}

std::vector<Tensor> Session::run(const std::vector<std::string>& names)
{
    const Graph& g = *impl_->graph;
    std::vector<int> targets;
    for (const auto& n : names) {
        const int b = g.find_blob(n);
        check(b >= 0, g.source, ": the model has no blob named '", n, "'");
        if (!impl_->results.count(b) && std::find(targets.begin(), targets.end(), b) == targets.end())
            targets.push_back(b);
    }
    if (!targets.empty()) {
        std::sort(targets.begin(), targets.end());
        PlanKey key{targets, {}};
        for (auto& kv : impl_->inputs) key.inputs.push_back({kv.first, TensorDesc{kv.second.shape(), kv.second.dtype()}});
        if (!impl_->plan || !(impl_->plan_key == key)) {
            impl_->plan = impl_->prepare(targets);
            impl_->plan_key = key;
        }
        impl_->execute(*impl_->plan, targets);
    }
    std::vector<Tensor> out;
    for (const auto& n : names) out.push_back(impl_->results.at(g.find_blob(n)));
    return out;
}

Tensor Session::get(const std::string& name) { return run({name})[0]; }

void Session::set_callbacks(OpCallback before, OpCallback after, bool stored_layouts)
{
    const bool see_plain = (before || after) && !stored_layouts;
    if (see_plain != impl_->callbacks_see_plain) impl_->plan.reset();
    impl_->callbacks_see_plain = see_plain;
    impl_->before = std::move(before);
    impl_->after = std::move(after);
}

std::map<std::string, std::string> Session::layer_devices() const
{
    std::map<std::string, std::string> where;
    if (!impl_->plan) return where;
    const std::vector<int>& steps = impl_->plan->steps;
    for (size_t s = 0; s < steps.size() && s < impl_->step_where.size(); ++s) {
        const Impl::Where w = impl_->step_where[s];
        where[impl_->graph->layers[steps[s]].name] = w == Impl::Where::Device ? impl_->backend->device_name()
                                                     : w == Impl::Where::View ? "view"
                                                                              : "cpu";
    }
    return where;
}

std::map<std::string, int64_t> Session::layer_transfer_bytes() const
{
    std::map<std::string, int64_t> bytes;
    if (!impl_->plan) return bytes;
    const std::vector<int>& steps = impl_->plan->steps;
    for (size_t s = 0; s < steps.size() && s < impl_->step_where.size(); ++s)
        if (impl_->step_where[s] == Impl::Where::Device) bytes[impl_->graph->layers[steps[s]].name] = impl_->step_transfers[s];
    return bytes;
}

int64_t Session::peak_bytes() const
{
    return impl_->plan ? impl_->plan->arena_bytes + impl_->plan->owned_bytes : 0;
}

const Options& Session::options() const { return impl_->options; }

} // namespace kestrel
