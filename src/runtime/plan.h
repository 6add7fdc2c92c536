// The plan of a Session for one set of input shapes (runtime/planner.cpp
// makes it, runtime/execute.cpp runs it): which layers run in what order,
// where each blob's bytes live (the arena and its offsets, views, owned
// buffers), each blob's layout and dtype (float, int8, channel blocks), and
// what each step prepared (its op's state, its device kernel, its scratch).
// A value: analyze_model (runtime/analysis.h) reports it, `kestrel info --plan`
// prints it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kestrel/op.h"
#include "kestrel/options.h"
#include "runtime/device_backend.h"

namespace kestrel {

// Precision BF16 where the CPU multiplies bfloat16 (else fp32 runs).
bool computes_bf16(const Options& options);

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

// Outputs at most this large are evaluated while planning when their inputs are known.
inline constexpr int64_t kMaxPlanTimeElements = 4096;

inline Shape stored_shape(const TensorDesc& d) { return stored_shape(d.shape, d.layout); }

inline int64_t desc_bytes(const TensorDesc& d) { return shape_numel(stored_shape(d)) * static_cast<int64_t>(dtype_size(d.dtype)); }

// What an op that takes channel blocks elementwise sees of a blob: its stored shape.
inline TensorDesc as_elementwise(const TensorDesc& d) { return TensorDesc(stored_shape(d), d.dtype); }

inline std::string shapes_str(const std::vector<TensorDesc>& ds)
{
    std::string s;
    for (const TensorDesc& d : ds) s += (s.empty() ? "" : ", ") + shape_str(d.shape);
    return s;
}

// Per-sample descriptions of a batched layer's inputs (with input0_only, the
// others are shared by every sample); returns the batch size.
int64_t split_batch(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& per_sample, bool input0_only = false);
// Sample `i` of a batched tensor, as a view.
Tensor sample_view(const Tensor& t, int64_t i);

} // namespace kestrel
