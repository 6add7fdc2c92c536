// Session's inside (include/kestrel/net.h): its inputs, its cached plan and
// arena, and the planning and execution steps, each in a file of one concern:
//   plan_shapes.cpp   which layers run, shape inference, values known while planning
//   plan_layouts.cpp  int8 activations and channel-block layouts
//   plan_steps.cpp    per-step prepare (op state, scratch) and device placement
//   plan_memory.cpp   the arena: offsets, views, in-place results
//   planner.cpp       the passes in order (and the plan as a report)
//   execute.cpp       running a plan
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "graph/graph.h"
#include "kestrel/net.h"
#include "runtime/plan.h"

namespace kestrel {

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

} // namespace kestrel
