// Host tensors to and from device buffers (mapped host-visible memory), and
// GPU kernels' inputs read from other kernels' outputs on the device.
#include <algorithm>
#include <cstring>

#include "backend/vulkan/gpu_kernel.h"
#include "core/half.h"
#include "kestrel/error.h"

namespace kestrel::vulkan {

void upload(const Tensor& t, Buffer& b)
{
    check(t.nbytes() <= b.bytes(), "upload of ", t.nbytes(), " bytes into a buffer of ", b.bytes());
    if (t.nbytes()) std::memcpy(b.data(), t.raw(), t.nbytes());
}

void download(const Buffer& b, Tensor& t)
{
    check(t.nbytes() <= b.bytes(), "download of ", t.nbytes(), " bytes from a buffer of ", b.bytes());
    if (t.nbytes()) std::memcpy(t.raw(), b.data(), t.nbytes());
}

void GpuKernel::input_buffer(size_t k, Buffer* b)
{
    if (inputs_.size() <= k) inputs_.resize(k + 1), on_device_.resize(k + 1);
    inputs_[k] = b;
}

void GpuKernel::output_buffer(size_t k, const Buffer* b)
{
    if (outputs_.size() <= k) outputs_.resize(k + 1), off_host_.resize(k + 1);
    outputs_[k] = b;
}

bool GpuKernel::read_from(size_t input, DeviceKernel& producer, size_t output)
{
    const auto* from = dynamic_cast<const GpuKernel*>(&producer);
    if (!from || from->fp16_ != fp16_ || input >= inputs_.size() || !inputs_[input] || output >= from->outputs_.size() ||
        !from->outputs_[output] || from->outputs_[output]->bytes() < inputs_[input]->bytes())
        return false;
    inputs_[input]->share(*from->outputs_[output]);
    on_device_[input] = true;
    return true;
}

void GpuKernel::set_output_on_host(size_t output, bool on_host)
{
    if (output < outputs_.size()) off_host_[output] = !on_host;
}

void upload_fp16(const Tensor& t, Buffer& b)
{
    check(t.dtype() == DType::F32 && size_t(t.numel()) * 2 <= b.bytes(), "float16 upload of ", t.numel(),
          " values into a buffer of ", b.bytes(), " bytes");
    const float* from = t.data<float>();
    uint16_t* to = static_cast<uint16_t*>(b.data());
    for (int64_t i = 0; i < t.numel(); ++i) to[i] = float_to_half(from[i]);
}

void download_fp16(const Buffer& b, Tensor& t)
{
    check(t.dtype() == DType::F32 && size_t(t.numel()) * 2 <= b.bytes(), "float16 download of ", t.numel(),
          " values from a buffer of ", b.bytes(), " bytes");
    const uint16_t* from = static_cast<const uint16_t*>(b.data());
    float* to = t.data<float>();
    for (int64_t i = 0; i < t.numel(); ++i) to[i] = half_to_float(from[i]);
}

bool StepsKernel::store_fp16()
{
    for (const Dispatch& d : steps_)
        if (!has_spirv(d.shader + "_fp16")) return false;
    for (Dispatch& d : steps_) d.shader += "_fp16";
    for (const auto& [b, t] : operands_) upload_fp16(t, *b);
    return fp16_ = true;
}

void GpuKernel::upload_inputs(const std::vector<Tensor>& in)
{
    transfer_bytes_ = 0;
    for (size_t k = 0; k < std::min(in.size(), inputs_.size()); ++k) {
        if (!inputs_[k] || on_device_[k]) continue;
        if (fp16_) upload_fp16(in[k], *inputs_[k]);
        else upload(in[k], *inputs_[k]);
        transfer_bytes_ += int64_t(in[k].nbytes() / (fp16_ ? 2 : 1));
    }
}

void GpuKernel::download_outputs(std::vector<Tensor>& out)
{
    for (size_t k = 0; k < std::min(out.size(), outputs_.size()); ++k) {
        if (!outputs_[k] || off_host_[k]) continue;
        if (fp16_) download_fp16(*outputs_[k], out[k]);
        else download(*outputs_[k], out[k]);
        transfer_bytes_ += int64_t(out[k].nbytes() / (fp16_ ? 2 : 1));
    }
}

} // namespace kestrel::vulkan
