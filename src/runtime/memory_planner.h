// Assigns arena offsets to buffers whose lifetimes are known (first and last
// step that touches them): buffers alive at the same time never overlap, the
// others share memory. Greedy by size, largest first (as TFLite's planner).
#pragma once
#include <cstdint>
#include <vector>

namespace kestrel {

struct BufferRequest {
    int64_t bytes = 0;
    int first_step = 0;
    int last_step = 0;
};

struct MemoryPlan {
    std::vector<int64_t> offsets; // one per request
    int64_t arena_bytes = 0;
};

// With reuse=false every buffer gets its own range (for debugging).
MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, bool reuse, int64_t alignment = 64);

} // namespace kestrel
