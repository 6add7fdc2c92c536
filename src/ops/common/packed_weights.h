// Weights in a kernel's packed form (GEMM panels, Winograd transforms), built
// once, by load_model() or by the first prepare() whose input shape wants that
// form; prepare() may run in sessions on several threads at once.
#pragma once
#include <mutex>
#include <vector>

namespace kestrel {

class PackedWeights {
public:
    // The packed floats, from build() (returning std::vector<float>) if not built yet.
    template <class Build> const float* get(const Build& build) const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!built_) {
            floats_ = build();
            built_ = true;
        }
        return floats_.data();
    }
    // Forgets them (new weights loaded).
    void reset()
    {
        std::lock_guard<std::mutex> lock(mutex_);
        floats_ = {};
        built_ = false;
    }
    // The packed floats (nullptr until built).
    const float* data() const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return built_ ? floats_.data() : nullptr;
    }
    bool built() const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return built_;
    }
    size_t floats() const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return floats_.size();
    }

private:
    mutable std::mutex mutex_;
    mutable bool built_ = false;
    mutable std::vector<float> floats_;
};

} // namespace kestrel
