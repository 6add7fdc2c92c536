// Layers on a device other than the CPU (Options::backend): a backend offers
// a kernel per layer it can run at the planned shapes; every other layer runs
// on the CPU (per-layer fallback, MNN's heterogeneous execution). Kernels take
// and give host tensors: each copies its inputs to the device and its outputs
// back (on lavapipe and unified-memory GPUs the device memory is the host's).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kestrel/op.h"
#include "kestrel/options.h"

namespace kestrel {

class DeviceKernel {
public:
    virtual ~DeviceKernel() = default;
    virtual void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) = 0;
    // The device's own time for the last run (its timestamps, ms), transfers
    // aside; -1 when the device does not say.
    virtual double device_ms() const { return -1; }
};

class DeviceBackend {
public:
    virtual ~DeviceBackend() = default;
    virtual std::string device_name() const = 0;
    // Layer `l`'s kernel at these shapes, or null: the layer runs on the CPU.
    virtual std::unique_ptr<DeviceKernel> kernel_for(const Layer& l, const std::vector<TensorDesc>& in,
                                                     const std::vector<TensorDesc>& out) = 0;
};

// The backend Options ask for: null for the CPU; throws kestrel::Error when
// the library was built without it or the device cannot be opened.
std::shared_ptr<DeviceBackend> make_device_backend(const Options& options);

} // namespace kestrel
