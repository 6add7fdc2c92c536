// One bounded pool of worker threads shared by every session of a process.
// Idle workers watch for new work for about a millisecond, then sleep on a
// condition variable: a network's next layer usually comes sooner than a
// sleeping thread wakes up (tens of microseconds on a VM, longer than many
// layers), and nothing spins for long after a run.
// parallel_for may be called from several threads at once; the caller takes
// part in its own job, so a job always makes progress even if workers are busy.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kestrel {

// fn(begin, end) handles the half-open range of work items [begin, end).
using RangeFn = std::function<void(int64_t begin, int64_t end)>;

class ThreadPool {
public:
    explicit ThreadPool(int workers);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    // Splits [0, n) into at most `max_threads` contiguous chunks and runs them,
    // the calling thread included. Exceptions from fn propagate to the caller.
    void parallel_for(int64_t n, int max_threads, const RangeFn& fn);
    int workers() const { return static_cast<int>(threads_.size()); }

    // Process-wide pool sized to the hardware (created on first use).
    static ThreadPool& global();

private:
    struct Job;
    void worker_loop();

    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::shared_ptr<Job>> queue_;
    bool stopping_ = false;
    // Jobs queued so far: idle workers watch it for a moment before sleeping.
    std::atomic<uint64_t> posted_{0};
};

// What a kernel needs to run in parallel: the pool and the thread budget.
struct Parallel {
    ThreadPool* pool = nullptr;
    int threads = 1;
    void for_range(int64_t n, const RangeFn& fn) const
    {
        if (pool == nullptr || threads <= 1 || n <= 1) {
            if (n > 0) fn(0, n);
            return;
        }
        pool->parallel_for(n, threads, fn);
    }
};

// How many chunks to cut `items` into, for each of `units` tasks already
// there: at least `min_chunks` (a cache bound, or enough work for every
// thread), and more while the tasks (units x chunks) are few and do not
// divide evenly among the threads. parallel_for deals contiguous runs, so 3
// tasks on 2 threads go 2 and 1, while 4 go 2 and 2. At most one chunk per item.
int64_t even_chunks(int64_t units, int64_t items, int64_t min_chunks, int threads);

} // namespace kestrel
