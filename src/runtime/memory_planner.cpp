#include "runtime/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace kestrel {

namespace {
int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b)
{
    return a.first_step <= b.last_step && b.first_step <= a.last_step;
}
} // namespace

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, bool reuse, int64_t alignment)
{
    MemoryPlan plan;
    plan.offsets.assign(requests.size(), 0);
    std::vector<size_t> order(requests.size());
    std::iota(order.begin(), order.end(), 0);
    if (!reuse) {
        for (size_t i : order) {
            plan.offsets[i] = plan.arena_bytes;
            plan.arena_bytes += align_up(requests[i].bytes, alignment);
        }
        return plan;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });
    std::vector<size_t> placed;
    for (size_t i : order) {
        const int64_t size = align_up(requests[i].bytes, alignment);
        // Live neighbours sorted by offset; take the first gap that fits (best-fit among gaps).
        std::vector<size_t> live;
        for (size_t j : placed)
            if (lifetimes_overlap(requests[i], requests[j])) live.push_back(j);
        std::sort(live.begin(), live.end(), [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });
        int64_t best = -1, best_gap = 0, cursor = 0;
        for (size_t j : live) {
            const int64_t gap = plan.offsets[j] - cursor;
            if (gap >= size && (best < 0 || gap < best_gap)) {
                best = cursor;
                best_gap = gap;
            }
            cursor = std::max(cursor, plan.offsets[j] + align_up(requests[j].bytes, alignment));
        }
        plan.offsets[i] = best >= 0 ? best : cursor;
        plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[i] + size);
        placed.push_back(i);
    }
    return plan;
}

} // namespace kestrel
