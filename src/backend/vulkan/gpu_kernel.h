// What a Vulkan layer kernel is made from: the device, the layer (its type
// and params) and its planned shapes. A factory returns null for cases it
// does not take (dtypes, ranks, sizes), and the layer runs on the CPU.
#pragma once
#include <functional>
#include <memory>

#include "backend/vulkan/device.h"
#include "runtime/device_backend.h"

namespace kestrel::vulkan {

using GpuKernelFactory = std::unique_ptr<DeviceKernel> (*)(const std::shared_ptr<Device>& device, const Layer& l,
                                                          const std::vector<TensorDesc>& in,
                                                          const std::vector<TensorDesc>& out);

std::unique_ptr<DeviceKernel> make_binary_op_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                    const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// One-input maps: UnaryOp and the activation layers.
std::unique_ptr<DeviceKernel> make_unary_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// Convolution and ConvolutionDepthWise, 2-D.
std::unique_ptr<DeviceKernel> make_convolution_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                      const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// InnerProduct.
std::unique_ptr<DeviceKernel> make_inner_product_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                        const std::vector<TensorDesc>& in,
                                                        const std::vector<TensorDesc>& out);

// Pooling, 2-D.
std::unique_ptr<DeviceKernel> make_pooling_kernel(const std::shared_ptr<Device>& device, const Layer& l,
                                                  const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// Copies between host tensors and device buffers.
void upload(const Tensor& t, Buffer& b);
void download(const Buffer& b, Tensor& t);

} // namespace kestrel::vulkan
