// Element-wise bandwidth microbenchmarks: float add through the broadcast
// engine (kernels/broadcast.h, the path of BinaryOp / Elementwise) against
// memcpy of the same bytes, on 64 MiB tensors, with 1 and 2 threads of the
// process-wide pool. Figures are bytes moved per second (SetBytesProcessed):
//   memcpy            2 x 64 MiB  (read src, write dst)
//   add same shape    3 x 64 MiB  (read A, read B, write C)
//   add in place      3 x 64 MiB  (read A, read B, write A: the runtime's
//                                  usual case when A dies at the add)
//   add per channel   2 x 64 MiB + B (B is 64 floats: read A, write C)
//   exp in cache      2 x 1 MiB  (control: compute-bound, shows whether a
//                                  second core is actually available)
// Arg = threads. Wall-clock time (UseRealTime). docs/benchmarks.md has the
// recorded figures and how to run.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/thread_pool.h"
#include "kernels/broadcast.h"
#include "kernels/elementwise_ops.h"

namespace {

using namespace kestrel;

constexpr int64_t kBytes = int64_t(64) << 20;            // one tensor
constexpr int64_t kFloats = kBytes / int64_t(sizeof(float)); // 16 Mi elements
constexpr int64_t kChannels = 64;                          // per-channel case: (64, 512, 512)
constexpr int64_t kSpatial = kFloats / kChannels;

struct FreeDeleter {
    void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], FreeDeleter>;

// 64-byte aligned, every page touched before timing starts.
Buffer make_buffer(int64_t n, float v)
{
    auto* p = static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(n) * sizeof(float)));
    if (p == nullptr) std::abort();
    for (int64_t i = 0; i < n; ++i) p[i] = v + static_cast<float>(i % 1024) * 0.25f;
    return Buffer(p);
}

struct Buffers {
    Buffer a = make_buffer(kFloats, 1.f);
    Buffer b = make_buffer(kFloats, 2.f);
    Buffer c = make_buffer(kFloats, 0.f);
    Buffer channel = make_buffer(kChannels, 3.f);
};
Buffers& buffers()
{
    static Buffers b;
    return b;
}

Parallel parallel_for_threads(int threads)
{
    Parallel p;
    p.threads = threads;
    p.pool = threads > 1 ? &ThreadPool::global() : nullptr;
    return p;
}

void BM_Memcpy(benchmark::State& state)
{
    Buffers& buf = buffers();
    const Parallel par = parallel_for_threads(static_cast<int>(state.range(0)));
    const int64_t parts = par.threads;
    for (auto _ : state) {
        par.for_range(parts, [&](int64_t p0, int64_t p1) {
            for (int64_t p = p0; p < p1; ++p) {
                const int64_t begin = kFloats * p / parts, end = kFloats * (p + 1) / parts;
                std::memcpy(buf.c.get() + begin, buf.a.get() + begin, static_cast<size_t>(end - begin) * sizeof(float));
            }
        });
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * 2 * kBytes);
}

void BM_AddSameShape(benchmark::State& state)
{
    Buffers& buf = buffers();
    const ParallelRunner run(parallel_for_threads(static_cast<int>(state.range(0))));
    const BroadcastPlan plan = broadcast_numpy(Shape{kChannels, kSpatial}, Shape{kChannels, kSpatial});
    for (auto _ : state) {
        broadcast_binary(plan, buf.a.get(), buf.b.get(), buf.c.get(), ew::Add(), run);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * 3 * kBytes);
}

void BM_AddSameShapeInPlace(benchmark::State& state)
{
    Buffers& buf = buffers();
    const ParallelRunner run(parallel_for_threads(static_cast<int>(state.range(0))));
    const BroadcastPlan plan = broadcast_numpy(Shape{kChannels, kSpatial}, Shape{kChannels, kSpatial});
    for (auto _ : state) {
        broadcast_binary(plan, buf.c.get(), buf.b.get(), buf.c.get(), ew::Add(), run);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * 3 * kBytes);
}

void BM_AddPerChannel(benchmark::State& state)
{
    Buffers& buf = buffers();
    const ParallelRunner run(parallel_for_threads(static_cast<int>(state.range(0))));
    const BroadcastPlan plan = broadcast_numpy(Shape{kChannels, 512, 512}, Shape{kChannels, 1, 1});
    for (auto _ : state) {
        broadcast_binary(plan, buf.a.get(), buf.channel.get(), buf.c.get(), ew::Add(), run);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * (2 * kBytes + kChannels * int64_t(sizeof(float))));
}

// Control: compute-bound exp over 1 MiB (cache resident). If 2 threads do not
// beat 1 here either, the machine is not giving the process a second core.
void BM_ExpInCache(benchmark::State& state)
{
    Buffers& buf = buffers();
    const ParallelRunner run(parallel_for_threads(static_cast<int>(state.range(0))));
    constexpr int64_t n = (int64_t(1) << 20) / int64_t(sizeof(float));
    const BroadcastPlan plan = elementwise_plan(Shape{n});
    for (auto _ : state) {
        broadcast_unary(plan, buf.a.get(), buf.c.get(), ew::Exp(), run);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(state.iterations() * 2 * n * int64_t(sizeof(float)));
}

#define KESTREL_BW_BENCH(fn) \
    BENCHMARK(fn)->Arg(1)->Arg(2)->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond)->MinTime(0.5)

KESTREL_BW_BENCH(BM_Memcpy);
KESTREL_BW_BENCH(BM_AddSameShape);
KESTREL_BW_BENCH(BM_AddSameShapeInPlace);
KESTREL_BW_BENCH(BM_AddPerChannel);
KESTREL_BW_BENCH(BM_ExpInCache);

} // namespace

BENCHMARK_MAIN();
