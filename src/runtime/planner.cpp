// Planning in order: shapes, precision and layouts, per-step prepare,
// memory, device links; and the plan of a model as a report (analyze_model).
#include <algorithm>

#include "runtime/analysis.h"
#include "runtime/session_impl.h"

namespace kestrel {

std::unique_ptr<Plan> Session::Impl::prepare(const std::vector<int>& targets) const
{
    auto p = std::make_unique<Plan>();
    p->all_layers = layers_needed(targets);
    p->blobs.resize(graph->blobs.size());
    for (int b = 0; b < static_cast<int>(graph->blobs.size()); ++b) p->blobs[b].root = b;
    // Inputs the chosen layers read must all be set.
    std::vector<bool> produced(graph->blobs.size(), false);
    for (int li : p->all_layers)
        for (int t : graph->layers[li].tops) produced[t] = true;
    auto require_input = [&](int b) {
        if (produced[b]) return;
        auto it = inputs.find(b);
        if (it == inputs.end())
            fail(graph->source, ": input '", graph->blobs[b].name, "' is not set");
        p->blobs[b].desc = TensorDesc{it->second.shape(), it->second.dtype(), {}};
        p->blobs[b].home = Home::Input;
    };
    for (int li : p->all_layers)
        for (int b : graph->layers[li].bottoms) require_input(b);
    for (int t : targets) require_input(t);
    infer_shapes(*p);
    choose_int8_blobs(*p, targets);
    choose_layouts(*p, targets);
    prepare_steps(*p);
    assign_memory(*p, targets);
    link_device_steps(*p, targets);
    return p;
}

namespace {

BlobPlacement placement(const Plan& p, int b)
{
    static const char* const kHomes[] = {"input", "arena", "owned", "view", "known"};
    const BlobPlan& bp = p.blobs[static_cast<size_t>(b)];
    BlobPlacement where;
    where.blob = b;
    where.home = kHomes[static_cast<int>(bp.home)];
    where.bytes = desc_bytes(bp.desc);
    if (bp.home == Home::Arena) where.offset = bp.offset;
    if (bp.home == Home::Alias) where.of = bp.source;
    return where;
}

} // namespace

ModelReport analyze_model(const Net& net, const std::map<std::string, TensorDesc>& inputs, const Options& options)
{
    Session session(net, options);
    Session::Impl& impl = *session.impl_;
    const Graph& g = *impl.graph;
    for (const auto& kv : inputs) {
        const int b = g.find_blob(kv.first);
        check(b >= 0, g.source, ": the model has no blob named '", kv.first, "'");
        // Shape-only placeholder: planning never touches data.
        impl.inputs[b] = Tensor::wrap(nullptr, kv.second.shape, kv.second.dtype);
    }
    std::vector<int> targets = g.outputs;
    std::sort(targets.begin(), targets.end());
    const std::unique_ptr<Plan> plan = impl.prepare(targets);
    ModelReport report;
    std::map<int, std::string> device_of; // step layers
    std::map<int, size_t> step_of;
    for (size_t s = 0; s < plan->steps.size(); ++s) {
        step_of[plan->steps[s]] = s;
        device_of[plan->steps[s]] = plan->prepared[s].device                          ? impl.backend->device_name()
                                    : g.layers[plan->steps[s]].op->outputs_alias_input() ? "view"
                                                                                         : "cpu";
    }
    for (int li : plan->all_layers) {
        const Layer& l = g.layers[li];
        LayerReport r;
        r.layer = li;
        r.device = device_of.count(li) ? device_of[li] : "";
        for (int b : l.bottoms) r.inputs.push_back(plan->blobs[b].desc);
        for (int t : l.tops) r.outputs.push_back(plan->blobs[t].desc);
        if (l.batched()) {
            std::vector<TensorDesc> in1, out1;
            const int64_t n = split_batch(r.inputs, in1, l.batch_input0_only());
            split_batch(r.outputs, out1);
            r.macs = n * l.op->macs(in1, out1);
        } else {
            r.macs = l.op->macs(r.inputs, r.outputs);
        }
        r.weight_bytes = l.op->weight_bytes();
        if (step_of.count(li)) {
            const size_t s = step_of[li];
            r.planned_step = true;
            for (int b : l.bottoms) r.input_places.push_back(placement(*plan, b));
            for (int t : l.tops) r.output_places.push_back(placement(*plan, t));
            const PreparedStep& ps = plan->prepared[s];
            for (size_t k = 0; k < ps.scratch_bytes.size(); ++k) {
                r.scratch_bytes += ps.scratch_bytes[k];
                if (k < ps.scratch_offsets.size() && (r.scratch_offset < 0 || ps.scratch_offsets[k] < r.scratch_offset))
                    r.scratch_offset = ps.scratch_offsets[k];
            }
            r.in_place = s < plan->inplace.size() && plan->inplace[s];
        }
        report.total_macs += r.macs;
        report.total_weight_bytes += r.weight_bytes;
        report.layers.push_back(std::move(r));
    }
    report.peak_bytes = plan->arena_bytes + plan->owned_bytes;
    report.arena_bytes = plan->arena_bytes;
    report.bf16 = computes_bf16(impl.options);
    return report;
}

} // namespace kestrel
