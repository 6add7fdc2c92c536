// Session: prepare (shape inference + memory plan, cached per input shapes and
// requested blobs) and run (execute the planned layers over one arena).
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "graph/graph.h"
#include "kernels/bf16_gemm.h"
#include "kestrel/net.h"
#include "runtime/device_backend.h"
#include "runtime/memory_planner.h"

namespace kestrel {

namespace {

// Precision BF16 where the CPU multiplies bfloat16 (else fp32 runs).
bool computes_bf16(const Options& options)
{
    return options.precision == Options::Precision::BF16 && bf16_gemm_has_dot_instructions();
}

// Where a blob's bytes live during a run.
//   Input: the caller's tensor.  Arena: a range of the session's arena.
//   Owned: its own buffer (requested blobs, data-dependent shapes).
//   Alias: a view of `source` (views, in-place results).  Known: computed
//   while planning (constants, shape arithmetic); the value is in desc.value.
enum class Home : uint8_t { Input, Arena, Owned, Alias, Known };

struct BlobPlan {
    TensorDesc desc;
    Home home = Home::Arena;
    int root = -1;      // blob owning the bytes (itself unless Alias)
    int source = -1;    // for Alias: the blob it is a view of
    int64_t offset = 0; // in the arena, for Arena roots
};

// What a step's op prepared for the plan's shapes (Op::prepare).
struct PreparedStep {
    std::unique_ptr<OpState> state;
    std::unique_ptr<DeviceKernel> device; // set: the step runs on Options::backend's device
    std::vector<bool> outputs_on_host;    // per output of a device step: copied to the host (link_device_steps)
    std::vector<int64_t> scratch_bytes;
    std::vector<int64_t> scratch_offsets; // in the arena
    bool done = false; // false: prepared at run time (shapes known only then)
};

struct Plan {
    std::vector<int> steps;      // layers to execute, in order
    std::vector<PreparedStep> prepared; // per step
    std::vector<int> all_layers; // also the ones evaluated while planning (for reports)
    std::vector<BlobPlan> blobs; // indexed by blob id
    std::vector<bool> inplace;   // per step: output 0 written over input 0
    std::vector<bool> elementwise; // per step: its op takes blocked blobs as plain ones (BlockedLayouts)
    std::vector<bool> data_dependent; // per blob: shape may differ at run time (downstream of dynamic_output_shape)
    std::vector<bool> shapes_vary;    // per layer: its output shapes are known only when it runs
    int64_t arena_bytes = 0;
    int64_t owned_bytes = 0;
};

// Where a blob's bytes lie inside another blob's (-1: in its own range).
struct Placement {
    int in = -1;
    int64_t offset = 0;
};

struct PlanKey {
    std::vector<int> targets;
    std::vector<std::pair<int, TensorDesc>> inputs;
    bool operator==(const PlanKey& o) const
    {
        if (targets != o.targets || inputs.size() != o.inputs.size()) return false;
        for (size_t i = 0; i < inputs.size(); ++i)
            if (inputs[i].first != o.inputs[i].first || inputs[i].second.shape != o.inputs[i].second.shape ||
                inputs[i].second.dtype != o.inputs[i].second.dtype)
                return false;
        return true;
    }
};

// Outputs at most this large are evaluated while planning when their inputs are known.
constexpr int64_t kMaxPlanTimeElements = 4096;

Shape stored_shape(const TensorDesc& d) { return stored_shape(d.shape, d.layout); }

int64_t desc_bytes(const TensorDesc& d) { return shape_numel(stored_shape(d)) * static_cast<int64_t>(dtype_size(d.dtype)); }

// What an op that takes channel blocks elementwise sees of a blob: its stored shape.
TensorDesc as_elementwise(const TensorDesc& d) { return TensorDesc(stored_shape(d), d.dtype); }

std::string shapes_str(const std::vector<TensorDesc>& ds)
{
    std::string s;
    for (const TensorDesc& d : ds) s += (s.empty() ? "" : ", ") + shape_str(d.shape);
    return s;
}

} // namespace

struct Session::Impl {
    const Net* net;
    const Graph* graph;
    Options options;
    std::shared_ptr<DeviceBackend> backend; // null: every layer on the CPU
    enum class Where { Cpu, Device, View };
    std::vector<Where> step_where; // per step of the plan last executed (layer_devices)
    std::vector<int64_t> step_transfers; // per step of the plan last executed: bytes its device kernel copied
    OpCallback before, after;
    bool callbacks_see_plain = false; // callbacks set without stored layouts: plan every blob plain
    std::map<int, Tensor> inputs;
    std::map<int, Tensor> results; // computed since the inputs were last set
    PlanKey plan_key;
    std::unique_ptr<Plan> plan;
    Tensor arena;
    std::vector<Tensor> owned; // per blob: the buffer of an Owned blob, reused while nobody else holds it

    std::vector<int> layers_needed(const std::vector<int>& targets) const;
    std::unique_ptr<Plan> prepare(const std::vector<int>& targets) const;
    void infer_layer(int li, std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const;
    bool evaluate_while_planning(int li, Plan& p) const;
    void infer_shapes(Plan& p) const;
    void choose_layouts(Plan& p, const std::vector<int>& targets) const;
    void choose_int8_blobs(Plan& p, const std::vector<int>& targets) const;
    BlockedLayouts step_layouts(const Plan& p, int li) const;
    std::vector<TensorDesc> step_descs(const Plan& p, size_t s, const std::vector<int>& blobs) const;
    void prepare_steps(Plan& p) const;
    void link_device_steps(Plan& p, const std::vector<int>& targets) const;
    std::unique_ptr<OpState> prepare_layer(int li, const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                                           std::vector<int64_t>& scratch_bytes) const;
    std::unique_ptr<DeviceKernel> device_kernel(int li, const std::vector<TensorDesc>& in,
                                                const std::vector<TensorDesc>& out) const;
    void assign_memory(Plan& p, const std::vector<int>& targets) const;
    std::vector<Placement> place_concat_inputs(const Plan& p, std::vector<int>& first, const std::vector<int>& last) const;
    void execute(const Plan& p, const std::vector<int>& targets);
};

std::vector<int> Session::Impl::layers_needed(const std::vector<int>& targets) const
{
    std::vector<bool> need(graph->layers.size(), false);
    std::vector<int> stack;
    for (int b : targets) stack.push_back(graph->blobs[b].producer);
    while (!stack.empty()) {
        const int li = stack.back();
        stack.pop_back();
        if (li < 0 || need[li]) continue;
        need[li] = true;
        for (int b : graph->layers[li].bottoms) stack.push_back(graph->blobs[b].producer);
    }
    std::vector<int> steps;
    for (int li = 0; li < static_cast<int>(need.size()); ++li)
        if (need[li] && graph->layers[li].type != "Input") steps.push_back(li);
    return steps;
}

// op->infer with size limits, and errors naming the layer and its input shapes.
namespace {

// Per-sample descriptions of a batched layer's inputs (with input0_only, the
// others are shared by every sample); returns the batch size.
int64_t split_batch(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& per_sample, bool input0_only = false)
{
    check(!in.empty(), "a batched layer needs inputs");
    const int64_t n = in[0].shape.empty() ? -1 : in[0].shape[0];
    for (const TensorDesc& d : in) {
        if (input0_only && &d != &in[0]) {
            per_sample.push_back(d);
            continue;
        }
        check(!d.shape.empty() && d.shape[0] == n, "batched inputs must share the leading batch axis, got ",
              shapes_str(in));
        per_sample.push_back(TensorDesc(Shape(d.shape.begin() + 1, d.shape.end()), d.dtype));
        per_sample.back().layout = d.layout;
    }
    return n;
}

// Sample `i` of a batched tensor, as a view.
Tensor sample_view(const Tensor& t, int64_t i)
{
    const Shape shape(t.shape().begin() + 1, t.shape().end());
    const size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(t.dtype());
    return Tensor::wrap(static_cast<uint8_t*>(const_cast<void*>(t.raw())) + i * bytes, shape, t.dtype());
}

} // namespace

void Session::Impl::infer_layer(int li, std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const
{
    try {
        const Layer& l = graph->layers[li];
        for (const TensorDesc& d : in) {
            check(!dtype_holds_tensors(d.dtype) || l.op->takes_sequences(), "a ", dtype_name(d.dtype),
                  " input, which this layer does not take");
            // Views (Reshape, Squeeze, ...) share the strings; other layers must say they copy them as objects.
            check(d.dtype != DType::String || l.op->takes_strings() || l.op->outputs_alias_input(),
                  "a string input, which this layer does not take");
        }
        if (l.batched()) {
            check(!l.op->dynamic_output_shape(), "a layer with data-dependent output shapes cannot be batched");
            std::vector<TensorDesc> per_sample;
            const int64_t n = split_batch(in, per_sample, l.batch_input0_only());
            l.op->infer(per_sample, out);
            for (TensorDesc& d : out) {
                d.shape.insert(d.shape.begin(), n);
                d.value = Tensor();
            }
        } else {
            l.op->infer(in, out);
        }
        for (const TensorDesc& d : out) {
            // Compare element counts, so that bytes = count * size cannot overflow.
            const int64_t count = shape_numel(d.shape);
            if (count > options.max_tensor_bytes / static_cast<int64_t>(dtype_size(d.dtype)))
                throw TooLargeError(detail::concat("output ", shape_str(d.shape), " is too large (", count,
                                                   " elements, limit ", options.max_tensor_bytes, " bytes)"));
        }
    } catch (const TooLargeError& e) {
        throw TooLargeError(graph->where(li) + ": " + e.what());
    } catch (const Error& e) {
        throw Error(graph->where(li) + ": " + e.what() + " (input shapes: " + shapes_str(in) + ")");
    }
}

// Runs a layer now when its outputs follow from what is already known (constant
// or shape-derived inputs) and are small: shape subgraphs fold away this way.
bool Session::Impl::evaluate_while_planning(int li, Plan& p) const
{
    const Layer& l = graph->layers[li];
    if (l.op->dynamic_output_shape() || l.tops.empty() || l.batched()) return false;
    // A planned shape downstream of a data-dependent op is only an upper bound: nothing to fold.
    for (int b : l.bottoms)
        if (p.data_dependent[b]) return false;
    if (l.bottoms.empty() && l.tops.size() == 1) {
        const Tensor c = l.op->constant_value();
        if (c.defined()) {
            const TensorDesc& d = p.blobs[l.tops[0]].desc;
            p.blobs[l.tops[0]].desc.value = c.view_as(d.shape, d.dtype);
            p.blobs[l.tops[0]].home = Home::Known;
            return true;
        }
    }
    const bool shapes_only = l.op->outputs_from_shapes_only();
    std::vector<Tensor> in;
    for (int b : l.bottoms) {
        const TensorDesc& d = p.blobs[b].desc;
        if (d.value.defined()) in.push_back(d.value);
        else if (shapes_only) in.push_back(Tensor::wrap(nullptr, d.shape, d.dtype));
        else return false;
    }
    // Outputs from shapes alone (PriorBox's anchors) would be recomputed by every
    // run otherwise: they are held whatever their size.
    int64_t elements = 0;
    for (int t : l.tops) elements += shape_numel(p.blobs[t].desc.shape);
    if (elements > kMaxPlanTimeElements && !shapes_only) return false;
    std::vector<Tensor> out;
    for (size_t i = 0; i < l.tops.size(); ++i) {
        const TensorDesc& d = p.blobs[l.tops[i]].desc;
        out.push_back(l.op->outputs_alias_input() ? in[l.op->alias_input(static_cast<int>(i))].clone().view_as(d.shape, d.dtype)
                                                  : Tensor(d.shape, d.dtype));
    }
    if (!l.op->outputs_alias_input()) {
        try {
            l.op->run(in, out, ExecContext(nullptr, 1));
        } catch (const Error& e) {
            throw Error(graph->where(li) + ": " + e.what());
        }
    }
    for (size_t i = 0; i < l.tops.size(); ++i) {
        p.blobs[l.tops[i]].desc.value = out[i];
        p.blobs[l.tops[i]].home = Home::Known;
    }
    return true;
}

void Session::Impl::infer_shapes(Plan& p) const
{
    std::vector<int> executed;
    p.data_dependent.assign(graph->blobs.size(), false);
    p.shapes_vary.assign(graph->layers.size(), false);
    for (int li : p.all_layers) {
        const Layer& l = graph->layers[li];
        std::vector<TensorDesc> in, out(l.tops.size());
        for (int b : l.bottoms) in.push_back(p.blobs[b].desc);
        bool downstream = false;
        for (int b : l.bottoms) downstream = downstream || p.data_dependent[b];
        p.shapes_vary[li] = l.op->dynamic_output_shape() && (downstream || !l.op->output_shapes_known(in));
        for (int t : l.tops) p.data_dependent[t] = downstream || p.shapes_vary[li];
        try {
            infer_layer(li, in, out);
        } catch (const TooLargeError&) {
            if (!downstream) throw;
            out.assign(l.tops.size(), TensorDesc(Shape{0})); // provisional: inferred again at run time
        } catch (const Error&) {
            if (!downstream) throw;
            out.assign(l.tops.size(), TensorDesc(Shape{0}));
        }
        for (size_t i = 0; i < l.tops.size(); ++i) {
            out[i].value = Tensor(); // values come only from evaluation below
            p.blobs[l.tops[i]].desc = out[i];
        }
        if (!evaluate_while_planning(li, p)) executed.push_back(li);
    }
    p.steps = executed;
}

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

#include "runtime/analysis.h"

namespace kestrel {

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
    for (size_t s = 0; s < plan->steps.size(); ++s)
        device_of[plan->steps[s]] = plan->prepared[s].device                          ? impl.backend->device_name()
                                    : g.layers[plan->steps[s]].op->outputs_alias_input() ? "view"
                                                                                         : "cpu";
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
        report.total_macs += r.macs;
        report.total_weight_bytes += r.weight_bytes;
        report.layers.push_back(std::move(r));
    }
    report.peak_bytes = plan->arena_bytes + plan->owned_bytes;
    return report;
}

} // namespace kestrel
