// Planning: the arena. Each blob's home (arena range, view, owned buffer),
// offsets from the memory planner, in-place results and concat inputs written
// in place.
#include <algorithm>

#include "runtime/memory_planner.h"
#include "runtime/session_impl.h"

namespace kestrel {

void Session::Impl::assign_memory(Plan& p, const std::vector<int>& targets) const
{
    const int nsteps = static_cast<int>(p.steps.size());
    // Roots and lifetimes: views alias their input's root; the root lives until its last alias dies.
    std::vector<int> first(graph->blobs.size(), -1), last(graph->blobs.size(), -1);
    auto root_of = [&](int b) { return p.blobs[b].root; };
    auto touch = [&](int root, int step) {
        if (first[root] < 0) first[root] = step;
        last[root] = std::max(last[root], step);
    };
    auto make_alias = [&](int blob, int source) {
        p.blobs[blob].home = Home::Alias;
        p.blobs[blob].source = source;
        p.blobs[blob].root = root_of(source);
    };
    p.inplace.assign(nsteps, false);
    for (int s = 0; s < nsteps; ++s) {
        const Layer& l = graph->layers[p.steps[s]];
        for (int b : l.bottoms) touch(root_of(b), s);
        for (size_t i = 0; i < l.tops.size(); ++i) {
            const int t = l.tops[i];
            if (p.shapes_vary[p.steps[s]]) p.blobs[t].home = Home::Owned;
            if (l.op->outputs_alias_input() && !l.bottoms.empty()) {
                make_alias(t, l.bottoms[l.op->alias_input(static_cast<int>(i))]);
            } else {
                p.blobs[t].root = t;
                touch(t, s);
            }
        }
    }
    // Shapes downstream of data-dependent ops are only known at run time, and
    // sequences, optionals and strings hold objects, not bytes: own buffers.
    for (int s = 0; s < nsteps; ++s)
        for (int t : graph->layers[p.steps[s]].tops)
            if ((p.data_dependent[t] || dtype_holds_objects(p.blobs[t].desc.dtype)) && p.blobs[t].home == Home::Arena)
                p.blobs[t].home = Home::Owned;
    // Roots of requested blobs are owned buffers handed to the caller; never reused.
    for (int t : targets) {
        const int r = root_of(t);
        if (p.blobs[r].home == Home::Arena) p.blobs[r].home = Home::Owned;
    }
    // In-place: output 0 takes input 0's buffer when that buffer dies at this step.
    for (int s = 0; s < nsteps && options.reuse_memory; ++s) {
        const Layer& l = graph->layers[p.steps[s]];
        if (!l.op->supports_inplace() || l.bottoms.empty() || l.tops.empty()) continue;
        const int in_root = root_of(l.bottoms[0]);
        const int out = l.tops[0];
        if (p.blobs[in_root].home != Home::Arena || last[in_root] != s || p.blobs[out].home != Home::Arena) continue;
        if (desc_bytes(p.blobs[in_root].desc) != desc_bytes(p.blobs[out].desc)) continue;
        // Another input viewing the same bytes (the same blob twice, or a Split/Reshape
        // view of it) would be read after the op starts overwriting them.
        bool shared = false;
        for (size_t j = 1; j < l.bottoms.size(); ++j) shared = shared || root_of(l.bottoms[j]) == in_root;
        if (shared) continue;
        p.inplace[s] = true;
        make_alias(out, l.bottoms[0]);
        last[in_root] = std::max(last[in_root], last[out]);
    }
    // Views made before an in-place decision may still name the old root.
    for (int s = 0; s < nsteps; ++s)
        for (int t : graph->layers[p.steps[s]].tops)
            if (p.blobs[t].home == Home::Alias) p.blobs[t].root = root_of(p.blobs[t].source);
    const std::vector<Placement> placed = options.reuse_memory ? place_concat_inputs(p, first, last)
                                                               : std::vector<Placement>(graph->blobs.size());
    std::vector<int> arena_blobs;
    std::vector<BufferRequest> requests;
    for (int b = 0; b < static_cast<int>(graph->blobs.size()); ++b) {
        if (first[b] < 0 || p.blobs[b].root != b || placed[b].in >= 0) continue;
        if (p.blobs[b].home == Home::Arena) {
            arena_blobs.push_back(b);
            requests.push_back(BufferRequest{desc_bytes(p.blobs[b].desc), first[b], last[b]});
        } else if (p.blobs[b].home == Home::Owned) {
            p.owned_bytes += desc_bytes(p.blobs[b].desc);
        }
    }
    const MemoryPlan mp = plan_memory(requests, options.reuse_memory);
    for (size_t i = 0; i < arena_blobs.size(); ++i) p.blobs[arena_blobs[i]].offset = mp.offsets[i];
    std::function<int64_t(int)> offset_of = [&](int b) {
        return placed[b].in < 0 ? p.blobs[b].offset : offset_of(placed[b].in) + placed[b].offset;
    };
    for (int b = 0; b < static_cast<int>(graph->blobs.size()); ++b)
        if (placed[b].in >= 0) p.blobs[b].offset = offset_of(b);
    // Scratch of each step's op, live during that step only, in one region
    // after the activations that every step reuses from its start: the same
    // few cache-hot bytes each time, as a per-step allocation would be.
    auto align_up = [](int64_t v) { return (v + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment; };
    const int64_t scratch_start = align_up(mp.arena_bytes);
    int64_t scratch_region = 0;
    for (int s = 0; s < nsteps; ++s) {
        int64_t cursor = 0;
        for (int64_t bytes : p.prepared[s].scratch_bytes) {
            p.prepared[s].scratch_offsets.push_back(scratch_start + cursor);
            cursor += align_up(bytes);
        }
        scratch_region = std::max(scratch_region, cursor);
    }
    p.arena_bytes = scratch_start + scratch_region;
    if (p.arena_bytes > options.max_arena_bytes)
        throw TooLargeError(detail::concat(graph->source, ": the model needs ", p.arena_bytes,
                                           " bytes of activations (limit ", options.max_arena_bytes, ")"));
}

// Inputs that a concat's output holds end to end (Op::input_offsets_in_output)
// are written there by their producers instead of being copied: an input
// whose bytes are an arena root of its own size, dying at the concat, lives
// inside the output, whose lifetime then starts with the input's. (A concat
// output may itself lie in a later concat's.)
std::vector<Placement> Session::Impl::place_concat_inputs(const Plan& p, std::vector<int>& first,
                                                          const std::vector<int>& last) const
{
    std::vector<Placement> placed(graph->blobs.size());
    for (int s = 0; s < static_cast<int>(p.steps.size()); ++s) {
        const Layer& l = graph->layers[p.steps[s]];
        if (l.tops.empty() || l.batched() || p.shapes_vary[p.steps[s]] || !p.prepared[s].done) continue;
        const int out = l.tops[0];
        if (p.blobs[out].home != Home::Arena || p.blobs[out].root != out) continue;
        const std::vector<int64_t> offsets =
            l.op->input_offsets_in_output(step_descs(p, s, l.bottoms), step_descs(p, s, l.tops));
        if (offsets.size() != l.bottoms.size()) continue;
        for (size_t i = 0; i < l.bottoms.size(); ++i) {
            const int b = l.bottoms[i], root = p.blobs[b].root;
            const bool once = std::count_if(l.bottoms.begin(), l.bottoms.end(),
                                            [&](int o) { return p.blobs[o].root == root; }) == 1;
            if (!once || p.blobs[root].home != Home::Arena || first[root] >= s || last[root] != s ||
                desc_bytes(p.blobs[root].desc) != desc_bytes(p.blobs[b].desc) || offsets[i] % kTensorAlignment != 0)
                continue;
            placed[root] = Placement{out, offsets[i]};
            first[out] = std::min(first[out], first[root]);
        }
    }
    return placed;
}

} // namespace kestrel
