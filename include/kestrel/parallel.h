// The thread budget a computation runs with: what kernels and the thread pool
// share below the op interface (ExecContext, what an op's forward() gets,
// extends it with the op's prepared state and scratch).
#pragma once
#include <cstdint>
#include <functional>

namespace kestrel {

class ThreadPool;

class ParallelContext {
public:
    ParallelContext(ThreadPool* pool, int threads) : pool_(pool), threads_(threads) {}
    int threads() const { return threads_; }
    // Runs fn over [0, n) split across the session's threads.
    void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) const;

private:
    ThreadPool* pool_;
    int threads_;
};

} // namespace kestrel
