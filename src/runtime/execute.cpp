// Running a plan: blobs materialized over the arena, each step on its device
// or the CPU (batched layers sample by sample), steps past a data-dependent
// shape prepared as they run, callbacks around each.
#include <algorithm>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "runtime/session_impl.h"

namespace kestrel {

void Session::Impl::execute(const Plan& p, const std::vector<int>& targets)
{
    if (!arena.defined() || arena.nbytes() < static_cast<size_t>(p.arena_bytes))
        arena = Tensor({std::max<int64_t>(p.arena_bytes, 1)}, DType::U8);
    std::vector<Tensor> values(graph->blobs.size());
    for (auto& kv : inputs) values[kv.first] = kv.second;
    for (size_t b = 0; b < p.blobs.size(); ++b)
        if (p.blobs[b].home == Home::Known) values[b] = p.blobs[b].desc.value;
    auto materialize = [&](int b, const TensorDesc& d) {
        const BlobPlan& bp = p.blobs[b];
        switch (bp.home) {
        case Home::Input:
        case Home::Known: break;
        case Home::Arena: values[b] = Tensor::wrap(arena.data<uint8_t>() + bp.offset, stored_shape(d), d.dtype); break;
        case Home::Owned: {
            // The last run's buffer when the caller has let go of it.
            Tensor& buffer = owned[b];
            if (!buffer.sole_owner() || buffer.shape() != d.shape || buffer.dtype() != d.dtype)
                buffer = Tensor(d.shape, d.dtype);
            values[b] = buffer;
            break;
        }
        case Home::Alias: values[b] = values[bp.source].view_as(stored_shape(d), d.dtype); break;
        }
    };
    step_where.assign(p.steps.size(), Where::Cpu); // no allocation once sized
    step_transfers.assign(p.steps.size(), 0);
    // Callbacks see every output: device steps copy all of theirs to the host while any is set.
    for (const PreparedStep& ps : p.prepared)
        for (size_t i = 0; i < ps.outputs_on_host.size(); ++i)
            ps.device->set_output_on_host(i, ps.outputs_on_host[i] || before || after);
    ThreadPool* pool = options.threads > 1 ? &ThreadPool::global() : nullptr;
    const ExecContext ctx(pool, options.threads);
    std::vector<void*> scratch;
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const int li = p.steps[s];
        const Layer& l = graph->layers[li];
        std::vector<Tensor> in, out;
        PreparedStep run_time_prep;         // when the shapes are known only now
        std::vector<Tensor> run_time_scratch;
        bool shapes_changed = false;
        for (int b : l.bottoms) {
            in.push_back(values[b]);
            // Downstream of a data-dependent op the plan is provisional: always infer again.
            shapes_changed = shapes_changed || values[b].shape() != stored_shape(p.blobs[b].desc) || p.data_dependent[b];
        }
        if (shapes_changed) {
            // Downstream of a data-dependent shape: infer again, use fresh buffers.
            std::vector<TensorDesc> in_desc, out_desc(l.tops.size());
            for (size_t i = 0; i < in.size(); ++i) {
                // At run time small inputs are known too: shape values computed downstream of a
                // data-dependent op reach the layers that need them.
                const bool small = in[i].numel() <= kMaxPlanTimeElements;
                in_desc.push_back(TensorDesc(in[i].shape(), in[i].dtype(), small ? in[i] : Tensor()));
            }
            infer_layer(li, in_desc, out_desc);
            run_time_prep.state = prepare_layer(li, in_desc, out_desc, run_time_prep.scratch_bytes);
            if (backend) run_time_prep.device = device_kernel(li, in_desc, out_desc);
            for (int64_t bytes : run_time_prep.scratch_bytes) run_time_scratch.emplace_back(Shape{bytes}, DType::U8);
            for (size_t i = 0; i < l.tops.size(); ++i)
                values[l.tops[i]] = l.op->outputs_alias_input()
                                        ? in[l.op->alias_input(static_cast<int>(i))].view_as(out_desc[i].shape, out_desc[i].dtype)
                                                                : Tensor(out_desc[i].shape, out_desc[i].dtype);
        } else {
            for (int t : l.tops) materialize(t, p.blobs[t].desc);
        }
        for (int t : l.tops) out.push_back(values[t]);
        if (l.op->outputs_alias_input()) step_where[s] = Where::View;
        double device_ms = -1; // the device's time for this layer, when it ran on one
        if (before) before(OpEvent{l.name, l.type, in, out});
        amx_tiles_configured() = false; // callbacks and custom ops may load tile configurations of their own
        if (!l.op->outputs_alias_input()) {
            const PreparedStep& prep = shapes_changed ? run_time_prep : p.prepared[s];
            scratch.clear();
            for (size_t k = 0; k < prep.scratch_bytes.size(); ++k)
                scratch.push_back(shapes_changed ? run_time_scratch[k].raw()
                                                 : arena.data<uint8_t>() + prep.scratch_offsets[k]);
            const ExecContext op_ctx = ctx.with(prep.state.get(), &scratch);
            step_where[s] = prep.device ? Where::Device : Where::Cpu;
            device_ms = prep.device ? 0 : -1;
            try {
                // A batched layer runs sample by sample, on its device or the CPU.
                auto run_one = [&](const std::vector<Tensor>& x, std::vector<Tensor>& y) {
                    if (!prep.device) return l.op->forward(x, y, op_ctx);
                    prep.device->run(x, y);
                    step_transfers[s] += prep.device->transfer_bytes();
                    const double ms = prep.device->device_ms();
                    device_ms = ms < 0 || device_ms < 0 ? -1 : device_ms + ms;
                };
                if (l.batched()) {
                    for (int64_t i = 0; i < (in.empty() ? 0 : in[0].dim(0)); ++i) {
                        std::vector<Tensor> in_i, out_i;
                        for (size_t k = 0; k < in.size(); ++k)
                            in_i.push_back(k > 0 && l.batch_input0_only() ? in[k] : sample_view(in[k], i));
                        for (const Tensor& t : out) out_i.push_back(sample_view(t, i));
                        run_one(in_i, out_i);
                    }
                } else {
                    run_one(in, out);
                }
            } catch (const Error& e) {
                throw Error(graph->where(li) + ": " + e.what());
            }
        }
        // A data-dependent op may hand back outputs of their true shape.
        if (l.op->dynamic_output_shape())
            for (size_t i = 0; i < l.tops.size(); ++i) values[l.tops[i]] = out[i];
        if (after) after(OpEvent{l.name, l.type, in, out, device_ms});
    }
    for (int t : targets) {
        // Hand out storage nobody else writes: owned roots as they are, anything else copied.
        const int root = p.blobs[t].root;
        const bool own_storage = p.blobs[root].home == Home::Owned || (p.blobs[t].home == Home::Alias &&
                                                                       values[t].raw() != nullptr && p.blobs[root].home == Home::Owned);
        results[t] = own_storage || p.blobs[t].home == Home::Input ? values[t] : values[t].clone();
    }
}

} // namespace kestrel
