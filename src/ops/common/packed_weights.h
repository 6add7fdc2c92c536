// Weights in a kernel's packed form (GEMM panels, Winograd transforms,
// bfloat16 copies), built
// once, by load_model() or by the first prepare() whose input shape wants that
// form; prepare() may run in sessions on several threads at once.
#pragma once
#include <mutex>
#include <vector>

namespace kestrel {

template <class T> class PackedWeightsOf {
public:
    // The packed values, from build() (returning std::vector<T>) if not built yet.
    template <class Build> const T* get(const Build& build) const
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
    // The packed values (nullptr until built).
    const T* data() const
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
    mutable std::vector<T> floats_;
};

using PackedWeights = PackedWeightsOf<float>;

} // namespace kestrel
