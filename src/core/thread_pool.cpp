#include "core/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "core/cpu_features.h"
#include "kestrel/parallel.h"

namespace kestrel {

namespace {

// Calls done() until it returns true or about a millisecond has passed;
// returns its last answer.
template <class Done> bool spin_until(const Done& done)
{
    constexpr auto kSpin = std::chrono::microseconds(1000);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 1;; ++i) {
        if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
        if (i % 64 == 0 && std::chrono::steady_clock::now() - start > kSpin) return done();
    }
}

} // namespace

// A parallel_for call: chunks are claimed with an atomic counter by the caller
// and by any worker that picks the job up; the caller waits for all to finish.
struct ThreadPool::Job {
    const RangeFn* fn = nullptr;
    int64_t n = 0;
    int64_t chunks = 0;
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> done{0};
    std::mutex mutex;
    std::condition_variable finished;
    std::exception_ptr error;

    // Runs chunks until none are left; returns when this thread has no more to claim.
    void run_chunks()
    {
        for (;;) {
            const int64_t c = next.fetch_add(1);
            if (c >= chunks) return;
            const int64_t begin = n * c / chunks;
            const int64_t end = n * (c + 1) / chunks;
            amx_tiles_configured() = false; // the thread may have run others' code
            try {
                (*fn)(begin, end);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex);
                if (!error) error = std::current_exception();
            }
            if (done.fetch_add(1) + 1 == chunks) {
                std::lock_guard<std::mutex> lock(mutex);
                finished.notify_all();
            }
        }
    }
};

ThreadPool::ThreadPool(int workers)
{
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
}

void ThreadPool::worker_loop()
{
    uint64_t seen = 0;
    for (;;) {
        std::shared_ptr<Job> job;
        spin_until([&] { return posted_.load(std::memory_order_acquire) != seen; });
        seen = posted_.load(std::memory_order_acquire);
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (stopping_ && queue_.empty()) return;
            job = queue_.front();
            // Leave the job queued while chunks remain, so other workers may join in.
            if (job->next.load() >= job->chunks) {
                queue_.pop_front();
                continue;
            }
        }
        job->run_chunks();
        std::lock_guard<std::mutex> lock(mutex_);
        if (!queue_.empty() && queue_.front() == job) queue_.pop_front();
    }
}

void ThreadPool::parallel_for(int64_t n, int max_threads, const RangeFn& fn)
{
    if (n <= 0) return;
    const int64_t chunks = std::min<int64_t>(n, std::max(1, std::min(max_threads, workers() + 1)));
    if (chunks <= 1) {
        amx_tiles_configured() = false;
        fn(0, n);
        return;
    }
    auto job = std::make_shared<Job>();
    job->fn = &fn;
    job->n = n;
    job->chunks = chunks;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.push_back(job);
        posted_.fetch_add(1, std::memory_order_release);
    }
    for (int64_t i = 1; i < chunks; ++i) wake_.notify_one();
    job->run_chunks();
    if (!spin_until([&] { return job->done.load() >= job->chunks; })) {
        std::unique_lock<std::mutex> lock(job->mutex);
        job->finished.wait(lock, [&] { return job->done.load() >= job->chunks; });
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = std::find(queue_.begin(), queue_.end(), job);
        if (it != queue_.end()) queue_.erase(it);
    }
    if (job->error) std::rethrow_exception(job->error);
}

ThreadPool& ThreadPool::global()
{
    static ThreadPool pool(std::max(1u, std::thread::hardware_concurrency()) - 1);
    return pool;
}

int64_t even_chunks(int64_t units, int64_t items, int64_t min_chunks, int threads)
{
    int64_t chunks = std::clamp<int64_t>(min_chunks, 1, std::max<int64_t>(items, 1));
    while (threads > 1 && chunks < items && units * chunks < 8 * threads && units * chunks % threads != 0) ++chunks;
    return chunks;
}

void ParallelContext::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) const
{
    Parallel{pool_, threads_}.for_range(n, fn);
}

} // namespace kestrel
