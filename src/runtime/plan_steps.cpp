// Planning: each step's per-shape work (Op::prepare: its state and scratch)
// and where it runs (a device kernel, or the CPU), with device residency.
#include <set>

#include "kernels/bf16_gemm.h"
#include "runtime/session_impl.h"

namespace kestrel {

// Precision BF16 where the CPU multiplies bfloat16 (else fp32 runs).
bool computes_bf16(const Options& options)
{
    return options.precision == Options::Precision::BF16 && bf16_gemm_has_dot_instructions();
}

// Op::prepare with the layer's shapes (per sample for a batched layer), with
// errors naming the layer.
std::unique_ptr<OpState> Session::Impl::prepare_layer(int li, const std::vector<TensorDesc>& in,
                                                      const std::vector<TensorDesc>& out,
                                                      std::vector<int64_t>& scratch_bytes) const
{
    const Layer& l = graph->layers[li];
    try {
        PrepareContext ctx(options.threads, computes_bf16(options));
        std::unique_ptr<OpState> state;
        if (l.batched()) {
            std::vector<TensorDesc> in1, out1;
            split_batch(in, in1, l.batch_input0_only());
            split_batch(out, out1);
            state = l.op->prepare(in1, out1, ctx);
        } else {
            state = l.op->prepare(in, out, ctx);
        }
        scratch_bytes = ctx.scratch_bytes();
        return state;
    } catch (const TooLargeError& e) {
        throw TooLargeError(graph->where(li) + ": " + e.what());
    } catch (const Error& e) {
        throw Error(graph->where(li) + ": " + e.what() + " (input shapes: " + shapes_str(in) + ")");
    }
}

// The backend's kernel for layer `li` at these shapes (per sample for a
// batched layer; null: the CPU runs it), with errors naming the layer.
std::unique_ptr<DeviceKernel> Session::Impl::device_kernel(int li, const std::vector<TensorDesc>& in,
                                                           const std::vector<TensorDesc>& out) const
{
    const Layer& l = graph->layers[li];
    try {
        if (!l.batched()) return backend->kernel_for(l, in, out);
        std::vector<TensorDesc> in1, out1; // per sample, as the layer runs
        split_batch(in, in1, l.batch_input0_only());
        split_batch(out, out1);
        return backend->kernel_for(l, in1, out1);
    } catch (const Error& e) {
        throw Error(graph->where(li) + ": " + backend->device_name() + ": " + e.what());
    }
}

// Prepares every step whose shapes are final; steps downstream of a
// data-dependent shape are prepared when they run.
void Session::Impl::prepare_steps(Plan& p) const
{
    p.prepared.resize(p.steps.size());
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const Layer& l = graph->layers[p.steps[s]];
        bool final_shapes = !l.op->outputs_alias_input();
        for (int b : l.bottoms) final_shapes = final_shapes && !p.data_dependent[b];
        if (!final_shapes) continue;
        PreparedStep& ps = p.prepared[s];
        const std::vector<TensorDesc> in = step_descs(p, s, l.bottoms), out = step_descs(p, s, l.tops);
        ps.state = prepare_layer(p.steps[s], in, out, ps.scratch_bytes);
        if (backend) ps.device = device_kernel(p.steps[s], in, out);
        ps.done = true;
    }
}

// Device residency: a blob a device step writes stays in the device's memory
// for the device steps that read it (directly or through views: each reads
// the writer's buffer) and is copied to the host only when a CPU step, a
// step prepared at run time, a batched step or the caller reads it.
void Session::Impl::link_device_steps(Plan& p, const std::vector<int>& targets) const
{
    if (!backend) return;
    std::map<int, std::pair<size_t, size_t>> writer; // blob -> (step, output) of a planned, unbatched device step
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const Layer& l = graph->layers[p.steps[s]];
        if (!p.prepared[s].device || l.batched()) continue;
        p.prepared[s].outputs_on_host.assign(l.tops.size(), false);
        for (size_t i = 0; i < l.tops.size(); ++i) writer[l.tops[i]] = {s, i};
    }
    // The blob whose writer made blob b's values: b, or the blob b views (in-place
    // steps share a buffer on the host, but each writes its own output blob).
    const auto written = [&](int b) {
        for (;;) {
            const int producer = graph->blobs[b].producer;
            if (producer < 0) return b;
            const Layer& l = graph->layers[producer];
            if (!l.op->outputs_alias_input() || l.bottoms.empty()) return b;
            const size_t i = std::find(l.tops.begin(), l.tops.end(), b) - l.tops.begin();
            b = l.bottoms[l.op->alias_input(static_cast<int>(i))];
        }
    };
    std::set<int> on_host; // blobs with a writer that the host reads
    for (int t : targets) on_host.insert(written(t));
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const Layer& l = graph->layers[p.steps[s]];
        if (l.op->outputs_alias_input()) continue; // a view reads nothing; its readers count
        DeviceKernel* reader = l.batched() ? nullptr : p.prepared[s].device.get();
        for (size_t k = 0; k < l.bottoms.size(); ++k) {
            const int b = l.bottoms[k], from = written(b);
            const auto w = writer.find(from);
            if (w == writer.end()) continue;
            const bool same_bytes = desc_bytes(p.blobs[b].desc) == desc_bytes(p.blobs[from].desc);
            const auto [ws, wi] = w->second;
            if (!reader || !same_bytes || !reader->read_from(k, *p.prepared[ws].device, wi)) on_host.insert(from);
        }
    }
    for (const auto& [blob, at] : writer) {
        p.prepared[at.first].outputs_on_host[at.second] = on_host.count(blob) > 0;
        p.prepared[at.first].device->set_output_on_host(at.second, on_host.count(blob) > 0);
    }
}

} // namespace kestrel
