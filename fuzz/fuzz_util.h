// Shared pieces of the libFuzzer targets: small resource limits (so a fuzzed
// model cannot ask for gigabytes) and a bounded "run the model" step.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "kestrel/kestrel.h"
#include "runtime/analysis.h"

namespace kestrel::fuzz {

constexpr int64_t kMaxBytes = int64_t(1) << 22;  // per tensor or weight
constexpr int64_t kMaxArena = int64_t(1) << 26;
constexpr int64_t kMaxMacs = 2'000'000;          // keep each input fast (~ms): more executions per second

inline Options small_options()
{
    Options o;
    o.max_tensor_bytes = kMaxBytes;
    o.max_arena_bytes = kMaxArena;
    return o;
}

// Runs every graph output on deterministic inputs of the declared shapes (or
// `fallback` when none is declared), if the model is cheap enough. Errors are
// expected and ignored: the fuzzer looks for crashes, leaks, UB and hangs.
inline void run_small(const Net& net, const Shape& fallback)
{
    std::map<std::string, TensorDesc> descs;
    std::map<std::string, Tensor> inputs;
    for (const std::string& name : net.input_names()) {
        Shape s = net.input_shape(name);
        if (s.empty()) s = fallback;
        for (auto& d : s) d = d < 0 ? 1 : d;
        const DType t = net.input_dtype(name);
        if (shape_numel(s) > kMaxBytes / static_cast<int64_t>(std::max<size_t>(dtype_size(t), 1))) return;
        Tensor x = Tensor::zeros(s, DType::F32);
        for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 37) % 17) * 0.125f - 1.f;
        inputs[name] = x.to(t);
        descs[name] = TensorDesc(s, t);
    }
    const ModelReport report = analyze_model(net, descs, small_options());
    if (report.total_macs > kMaxMacs) return;
    Session session(net, small_options());
    for (auto& kv : inputs) session.set_input(kv.first, kv.second);
    session.run(net.output_names());
}

} // namespace kestrel::fuzz
