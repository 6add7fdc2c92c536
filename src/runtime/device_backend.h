// Layers on a device other than the CPU (Options::backend): a backend offers
// a kernel per layer it can run at the planned shapes; every other layer runs
// on the CPU (per-layer fallback, MNN's heterogeneous execution). Kernels take
// and give host tensors; between two device kernels a tensor stays in device
// memory (the session links them, read_from), and crosses to the host only
// where a CPU layer, the caller or a callback reads it.
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
    // The bytes the last run copied between the host and the device (its inputs and outputs).
    virtual int64_t transfer_bytes() const { return 0; }
    // Device residency, set by the session once planned: input `input` is
    // read on the device from output `output` of `producer` (a kernel of the
    // same backend that runs before this one each run), not copied in; false
    // when the two cannot share it (the input is then copied in from the host).
    virtual bool read_from(size_t /*input*/, DeviceKernel& /*producer*/, size_t /*output*/) { return false; }
    // Whether output `output` is copied to the host tensor after each run
    // (by default every output is; the session leaves out those only device
    // kernels read).
    virtual void set_output_on_host(size_t /*output*/, bool /*on_host*/) {}
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
