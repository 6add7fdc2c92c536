// Planning: the precision and layout of each blob (int8 activations between
// the layers that pass them on, channel blocks between the layers that take them).
#include <algorithm>

#include "runtime/session_impl.h"

namespace kestrel {

namespace {

// Blobs tied into groups (union-find, paths halved as they are walked).
struct BlobGroups {
    std::vector<int> parent;
    explicit BlobGroups(int n) : parent(static_cast<size_t>(n))
    {
        for (int b = 0; b < n; ++b) parent[b] = b;
    }
    int find(int b)
    {
        for (; parent[b] != b; b = parent[b]) parent[b] = parent[parent[b]];
        return b;
    }
    void join(int a, int b) { parent[find(a)] = find(b); }
};

} // namespace

// Int8 activations (Op::int8_input_scale, can_write_int8, int8_passthrough):
// float blobs tied into groups by the pass-through layers between them
// (split, concatenation, max pooling); a group becomes int8 when each of its
// blobs is written by a step that can write int8 or by a pass-through, and
// read only by pass-throughs or as the input of layers that would quantize
// it, all with one scale. Not for the caller's blobs nor for callbacks that
// see every blob as the model defines it.
void Session::Impl::choose_int8_blobs(Plan& p, const std::vector<int>& targets) const
{
    if (callbacks_see_plain) return;
    const int nblobs = static_cast<int>(graph->blobs.size());
    BlobGroups tied(nblobs);
    std::vector<bool> bad(nblobs, true); // until a step writes it as int8 can be
    std::vector<float> reader_scale(nblobs, -1.f); // the readers' one scale (>= 0; a zero-weight model's are 0)
    auto read_with = [&](int b, float scale) {
        if (!(scale >= 0.f) || (reader_scale[b] >= 0.f && reader_scale[b] != scale)) bad[b] = true;
        reader_scale[b] = scale;
    };
    std::vector<bool> written(nblobs, false);
    for (int li : p.steps) {
        const Layer& l = graph->layers[li];
        std::vector<TensorDesc> in;
        for (int b : l.bottoms) in.push_back(p.blobs[b].desc);
        const bool through = !l.batched() && l.op->int8_passthrough(in);
        for (size_t i = 0; i < l.tops.size(); ++i) {
            written[l.tops[i]] = true;
            bad[l.tops[i]] = l.batched() || !(through || (i == 0 && l.op->can_write_int8(in)));
            if (through) tied.join(l.tops[i], l.bottoms.at(0));
        }
        for (size_t i = 0; i < l.bottoms.size(); ++i) {
            const int b = l.bottoms[i];
            if (through) {
                tied.join(b, l.bottoms[0]);
                continue;
            }
            if (i == 0 && !l.batched()) read_with(b, l.op->int8_input_scale());
            else bad[b] = true;
        }
    }
    for (int t : targets) bad[t] = true;
    std::vector<bool> bad_group(nblobs, false);
    std::vector<float> group_scale(nblobs, -1.f);
    for (int b = 0; b < nblobs; ++b) {
        const TensorDesc& d = p.blobs[b].desc;
        const int g = tied.find(b);
        if (!written[b] || bad[b] || d.dtype != DType::F32 || p.data_dependent[b]) bad_group[g] = true;
        if (reader_scale[b] < 0.f) continue;
        if (group_scale[g] >= 0.f && group_scale[g] != reader_scale[b]) bad_group[g] = true;
        group_scale[g] = reader_scale[b];
    }
    for (int b = 0; b < nblobs; ++b) {
        const int g = tied.find(b);
        if (bad_group[g] || group_scale[g] < 0.f) continue;
        p.blobs[b].desc.dtype = DType::I8;
        p.blobs[b].desc.int8_scale = group_scale[g];
    }
}

// Channel blocks (Layout::ChannelBlocks) for the blobs whose producer and
// readers all take them. The ops' BlockedLayouts groups tie blobs together
// (union-find); a group is blocked unless one of its blobs must stay plain:
// not a float [..., C, H, W] activation in the arena, asked for by the
// caller, with fewer channels than a block, or plain-only for one of the
// layers that touch it.
void Session::Impl::choose_layouts(Plan& p, const std::vector<int>& targets) const
{
    p.elementwise.assign(p.steps.size(), false);
    if (!options.blocked_layouts || callbacks_see_plain) return;
    const int nblobs = static_cast<int>(graph->blobs.size());
    BlobGroups tied(nblobs);
    std::vector<bool> plain(nblobs, false);
    // Fewer channels than a block: most of its lanes would be padding (the
    // kernels' work and the blob's memory doubled or more).
    const int64_t block = channel_block();
    for (int b = 0; b < nblobs; ++b) {
        const TensorDesc& d = p.blobs[b].desc;
        plain[b] = d.dtype != DType::F32 || d.shape.size() < 3 || p.blobs[b].home != Home::Arena || p.data_dependent[b] ||
                   d.shape[d.shape.size() - 3] < block;
    }
    for (int t : targets) plain[t] = true;
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const Layer& l = graph->layers[p.steps[s]];
        const BlockedLayouts bl = step_layouts(p, p.steps[s]);
        p.elementwise[s] = bl.elementwise;
        std::map<int, int> first_of_group;
        auto tie = [&](const std::vector<int>& blobs, const std::vector<int>& groups) {
            for (size_t i = 0; i < blobs.size(); ++i) {
                const int group = i < groups.size() ? groups[i] : -1;
                if (group < 0) {
                    plain[blobs[i]] = true;
                    continue;
                }
                auto [it, fresh] = first_of_group.emplace(group, blobs[i]);
                if (!fresh) tied.join(blobs[i], it->second);
            }
        };
        tie(l.bottoms, bl.inputs);
        tie(l.tops, bl.outputs);
    }
    std::vector<bool> plain_group(nblobs, false);
    for (int b = 0; b < nblobs; ++b)
        if (plain[b]) plain_group[tied.find(b)] = true;
    for (int b = 0; b < nblobs; ++b)
        if (!plain_group[tied.find(b)]) p.blobs[b].desc.layout = Layout::ChannelBlocks;
}

// Op::blocked_layouts with the layer's shapes (per sample for a batched layer).
BlockedLayouts Session::Impl::step_layouts(const Plan& p, int li) const
{
    const Layer& l = graph->layers[li];
    std::vector<TensorDesc> in, out;
    for (int b : l.bottoms) in.push_back(p.blobs[b].desc);
    for (int t : l.tops) out.push_back(p.blobs[t].desc);
    if (!l.batched()) return l.op->blocked_layouts(in, out, computes_bf16(options));
    std::vector<TensorDesc> in1, out1;
    split_batch(in, in1, l.batch_input0_only());
    split_batch(out, out1);
    return l.op->blocked_layouts(in1, out1, computes_bf16(options));
}

// The descriptions step `s` prepares with: blocked blobs as their stored
// shapes for an op that takes them elementwise.
std::vector<TensorDesc> Session::Impl::step_descs(const Plan& p, size_t s, const std::vector<int>& blobs) const
{
    std::vector<TensorDesc> descs;
    for (int b : blobs) {
        const TensorDesc& d = p.blobs[b].desc;
        descs.push_back(p.elementwise[s] && d.layout != Layout::Plain ? as_elementwise(d) : d);
    }
    return descs;
}

} // namespace kestrel
