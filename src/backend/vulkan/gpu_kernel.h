// What a Vulkan layer kernel is made from: the device, the layer (its type
// and params) and its planned shapes. A factory returns null for cases it
// does not take (dtypes, ranks, sizes), and the layer runs on the CPU.
#pragma once
#include <functional>
#include <memory>

#include "backend/vulkan/device.h"
#include "backend/vulkan/shaders.h"
#include "kernels/broadcast.h"
#include "runtime/device_backend.h"

namespace kestrel::vulkan {

// A GPU layer kernel: the device time of its last run (Device::run's), and
// its buffers for the layer's inputs and outputs, so that layers on the GPU
// pass tensors through device memory (read_from: an input's buffer becomes
// the producer's output buffer, and the input is not copied in; an output
// the host does not need is not copied out).
class GpuKernel : public DeviceKernel {
public:
    double device_ms() const override { return last_ms_; }
    int64_t transfer_bytes() const override { return transfer_bytes_; }
    bool read_from(size_t input, DeviceKernel& producer, size_t output) override;
    void set_output_on_host(size_t output, bool on_host) override;
    // Store the layer's inputs and outputs as float16 from now on (the
    // shaders' _fp16 variants, shaders/storage.glsl; copies convert); false
    // when the kernel has no such variant and stays float32.
    virtual bool store_fp16() { return false; }

protected:
    // Buffer `b` holds input k / output k as the tensor's bytes (a kernel
    // that packs or converts them offers no buffer, and copies them itself).
    void input_buffer(size_t k, Buffer* b);
    void output_buffer(size_t k, const Buffer* b);
    // The inputs not read from a producer copied in; the outputs the host needs
    // copied out (counted in transfer_bytes_: upload_inputs starts the count).
    void upload_inputs(const std::vector<Tensor>& in);
    void download_outputs(std::vector<Tensor>& out);

    double last_ms_ = -1;
    int64_t transfer_bytes_ = 0; // the last run's
    bool fp16_ = false;          // inputs and outputs stored as float16

private:
    std::vector<Buffer*> inputs_;
    std::vector<bool> on_device_; // per input: read from a producer's buffer
    std::vector<const Buffer*> outputs_;
    std::vector<bool> off_host_; // per output: not copied out
};

// The most iterations a kernel lets one loop of one invocation run (a
// reduction's group, a softmax lane, a normalized row): lavapipe's JIT ends a
// loop past 65535 iterations, and a single invocation folding more would be
// slow anywhere; such layers run on the CPU.
constexpr int64_t kMaxLoopIterations = 65535;

using GpuKernelFactory = std::unique_ptr<DeviceKernel> (*)(const std::shared_ptr<Device>& device, const Layer& l,
                                                          const std::vector<TensorDesc>& in,
                                                          const std::vector<TensorDesc>& out);

std::unique_ptr<DeviceKernel> make_binary_op_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                    const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// A step of shaders/binary_op.comp: y = a (op) b over a two-input broadcast
// plan (op: the shader's code, ncnn's op_type 0..18 or ONNX's forms 19..);
// false when the plan does not fit the shader.
bool binary_dispatch(int op, const BroadcastPlan& plan, const Buffer* a, const Buffer* b, const Buffer* y, Dispatch& d);

// One-input maps: UnaryOp and the activation layers.
std::unique_ptr<DeviceKernel> make_unary_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// Convolution and ConvolutionDepthWise, 2-D.
std::unique_ptr<DeviceKernel> make_convolution_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                      const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// Deconvolution and DeconvolutionDepthWise, 2-D.
std::unique_ptr<DeviceKernel> make_deconvolution_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                        const std::vector<TensorDesc>& in,
                                                        const std::vector<TensorDesc>& out);

// InnerProduct.
std::unique_ptr<DeviceKernel> make_inner_product_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                        const std::vector<TensorDesc>& in,
                                                        const std::vector<TensorDesc>& out);

// Pooling, 2-D.
std::unique_ptr<DeviceKernel> make_pooling_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                  const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// Softmax along an axis.
std::unique_ptr<DeviceKernel> make_softmax_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                  const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// Scale, BatchNorm, Bias, PReLU.
std::unique_ptr<DeviceKernel> make_channel_affine_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                         const std::vector<TensorDesc>& in,
                                                         const std::vector<TensorDesc>& out);

// Eltwise.
std::unique_ptr<DeviceKernel> make_eltwise_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                  const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// Interp (ncnn's form and ONNX's Resize).
std::unique_ptr<DeviceKernel> make_interp_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                 const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// Reduction.
std::unique_ptr<DeviceKernel> make_reduction_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                    const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// LayerNorm (ncnn's form).
std::unique_ptr<DeviceKernel> make_layer_norm_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                     const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// Gemm (ncnn's).
std::unique_ptr<DeviceKernel> make_gemm_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                               const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// MatMul (numpy's batch broadcasting).
std::unique_ptr<DeviceKernel> make_matmul_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                 const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// MultiHeadAttention and SDPA.
std::unique_ptr<DeviceKernel> make_multi_head_attention_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                               const std::vector<TensorDesc>& in,
                                                               const std::vector<TensorDesc>& out);
std::unique_ptr<DeviceKernel> make_sdpa_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                               const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// YoloDetectionOutput and Yolov3DetectionOutput; DetectionOutput (SSD).
std::unique_ptr<DeviceKernel> make_yolo_detection_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                         const std::vector<TensorDesc>& in,
                                                         const std::vector<TensorDesc>& out);
std::unique_ptr<DeviceKernel> make_ssd_detection_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                        const std::vector<TensorDesc>& in,
                                                        const std::vector<TensorDesc>& out);

// LRN.
std::unique_ptr<DeviceKernel> make_lrn_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                              const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// Layers that only move elements (ops/common/element_moves.h).
std::unique_ptr<DeviceKernel> make_element_moves_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                        const std::vector<TensorDesc>& in,
                                                        const std::vector<TensorDesc>& out);

// Copies between host tensors and device buffers.
void upload(const Tensor& t, Buffer& b);
void download(const Buffer& b, Tensor& t);

// A kernel whose shader maps input 0 (`in_floats` values, binding 0) to the
// output (`out_floats`, the last binding) over `items` invocations, with push
// constants `Push` and, between them, buffers holding `constants` (weights,
// per-channel values; an undefined tensor binds a placeholder): UnaryOp,
// Softmax, Pooling, InnerProduct, the per-channel maps.
template <class Push> class MapKernel final : public GpuKernel {
public:
    MapKernel(std::shared_ptr<Device> device, const char* shader, const Push& push, int64_t in_floats,
              int64_t out_floats, uint64_t items, uint32_t local_size = 256, const std::vector<Tensor>& constants = {})
        : device_(std::move(device)), shader_(shader), push_(push), x_(device_->buffer(in_floats * 4)),
          y_(device_->buffer(out_floats * 4)), items_(items), local_size_(local_size)
    {
        buffers_.push_back(x_.get());
        for (const Tensor& t : constants) {
            constants_.push_back(device_->buffer(t.defined() ? t.nbytes() : 4));
            if (t.defined()) upload(t, *constants_.back());
            buffers_.push_back(constants_.back().get());
        }
        buffers_.push_back(y_.get());
        input_buffer(0, x_.get());
        output_buffer(0, y_.get());
    }
    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override
    {
        upload_inputs(in);
        last_ms_ = device_->dispatch_items(shader_, buffers_, &push_, sizeof push_, items_, local_size_);
        download_outputs(out);
    }
    bool store_fp16() override
    {
        if (!has_spirv(shader_ + "_fp16")) return false;
        shader_ += "_fp16";
        return fp16_ = true;
    }

private:
    std::shared_ptr<Device> device_;
    std::string shader_;
    Push push_;
    std::unique_ptr<Buffer> x_, y_;
    std::vector<std::unique_ptr<Buffer>> constants_;
    std::vector<const Buffer*> buffers_;
    uint64_t items_;
    uint32_t local_size_;
};

// A kernel of buffers (inputs copied into theirs each run unless read from a
// producer on the device, constants once) and a list of dispatches run in one
// submission, output 0 in one buffer (Gemm, MatMul, the attention layers,
// BinaryOp, Eltwise, Interp). Constants are operands (weights: stored as the
// tensors are, float16 too) or tables (indices, tap weights: as given).
class StepsKernel final : public GpuKernel {
public:
    explicit StepsKernel(std::shared_ptr<Device> device) : device_(std::move(device)) {}
    Buffer* buffer(int64_t floats)
    {
        buffers_.push_back(device_->buffer(size_t(std::max<int64_t>(floats, 1)) * 4));
        return buffers_.back().get();
    }
    const Buffer* input(size_t index, int64_t floats)
    {
        Buffer* b = buffer(floats);
        input_buffer(index, b);
        return b;
    }
    const Buffer* constant(const Tensor& t)
    {
        Buffer* b = table(t);
        operands_.push_back({b, t});
        return b;
    }
    Buffer* table(const Tensor& t)
    {
        Buffer* b = buffer(t.numel());
        upload(t, *b);
        return b;
    }
    void add(Dispatch d) { steps_.push_back(std::move(d)); }
    void set_output(const Buffer* y) { output_buffer(0, y); }

    void run(const std::vector<Tensor>& in, std::vector<Tensor>& out) override
    {
        upload_inputs(in);
        last_ms_ = device_->run(steps_);
        download_outputs(out);
    }
    // When every step's shader has a float16 variant: those, and the operands as float16.
    bool store_fp16() override;

private:
    std::shared_ptr<Device> device_;
    std::vector<std::unique_ptr<Buffer>> buffers_;
    std::vector<std::pair<Buffer*, Tensor>> operands_;
    std::vector<Dispatch> steps_;
};

// Float32 values to and from buffers of float16 (round to nearest even).
void upload_fp16(const Tensor& t, Buffer& b);
void download_fp16(const Buffer& b, Tensor& t);

} // namespace kestrel::vulkan
