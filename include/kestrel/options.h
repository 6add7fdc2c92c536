#pragma once
#include <cstdint>

namespace kestrel {

struct Options {
    // Threads a session may use (the process-wide pool is bounded by the core count).
    int threads = 1;
    // Reuse intermediate buffers across layers (off: every blob gets its own buffer,
    // useful when inspecting many blobs with callbacks).
    bool reuse_memory = true;
    // Refuse any single tensor or weight larger than this, before allocating.
    int64_t max_tensor_bytes = int64_t(4) << 30;
    // Refuse a run whose planned activation memory exceeds this.
    int64_t max_arena_bytes = int64_t(16) << 30;
    // Room for later choices; today only fp32 compute on the CPU backend.
    enum class Precision { F32 } precision = Precision::F32;
    enum class Backend { CPU } backend = Backend::CPU;
};

} // namespace kestrel
