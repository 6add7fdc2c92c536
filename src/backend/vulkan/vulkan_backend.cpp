// The Vulkan backend: the GPU kernels registered per layer type
// (src/backend/vulkan/ops/), each asked whether it takes a layer at its shapes.
#include <map>

#include "backend/vulkan/device.h"
#include "backend/vulkan/gpu_kernel.h"
#include "runtime/device_backend.h"

namespace kestrel {

namespace vulkan {

const std::map<std::string, GpuKernelFactory>& gpu_kernels()
{
    static const std::map<std::string, GpuKernelFactory> table = {
        {"BinaryOp", make_binary_op_kernel}, {"UnaryOp", make_unary_kernel},  {"ReLU", make_unary_kernel},
        {"Clip", make_unary_kernel},         {"Sigmoid", make_unary_kernel},  {"Swish", make_unary_kernel},
        {"HardSigmoid", make_unary_kernel},  {"HardSwish", make_unary_kernel}, {"Mish", make_unary_kernel},
        {"GELU", make_unary_kernel},         {"TanH", make_unary_kernel},
        {"Convolution", make_convolution_kernel}, {"ConvolutionDepthWise", make_convolution_kernel},
        {"InnerProduct", make_inner_product_kernel}, {"Pooling", make_pooling_kernel},
        {"Softmax", make_softmax_kernel},
        {"Concat", make_element_moves_kernel}, {"Slice", make_element_moves_kernel},
        {"Crop", make_element_moves_kernel}, {"Permute", make_element_moves_kernel},
        {"ShuffleChannel", make_element_moves_kernel}, {"Padding", make_element_moves_kernel},
        {"Tile", make_element_moves_kernel}, {"Expand", make_element_moves_kernel},
        {"Gather", make_element_moves_kernel}, {"GatherElements", make_element_moves_kernel},
        {"GatherND", make_element_moves_kernel},
        {"Scale", make_channel_affine_kernel}, {"BatchNorm", make_channel_affine_kernel},
        {"Bias", make_channel_affine_kernel}, {"PReLU", make_channel_affine_kernel},
        {"Eltwise", make_eltwise_kernel}, {"Interp", make_interp_kernel}, {"Reduction", make_reduction_kernel},
        {"LRN", make_lrn_kernel}, {"LayerNorm", make_layer_norm_kernel}, {"Gemm", make_gemm_kernel}, {"MatMul", make_matmul_kernel},
        {"MultiHeadAttention", make_multi_head_attention_kernel}, {"SDPA", make_sdpa_kernel},
        {"YoloDetectionOutput", make_yolo_detection_kernel}, {"Yolov3DetectionOutput", make_yolo_detection_kernel},
        {"DetectionOutput", make_ssd_detection_kernel}, {"Deconvolution", make_deconvolution_kernel},
        {"DeconvolutionDepthWise", make_deconvolution_kernel},
    };
    return table;
}

namespace {

class VulkanBackend final : public DeviceBackend {
public:
    VulkanBackend(int device, bool fp16_storage) : device_(Device::open(device)), fp16_storage_(fp16_storage) {}
    std::string device_name() const override { return device_->name(); }
    std::unique_ptr<DeviceKernel> kernel_for(const Layer& l, const std::vector<TensorDesc>& in,
                                             const std::vector<TensorDesc>& out) override
    {
        const auto it = gpu_kernels().find(l.type);
        if (it == gpu_kernels().end()) return nullptr;
        std::unique_ptr<DeviceKernel> kernel = it->second(device_, l, in, out);
        // Float16 storage where asked for and the device and the kernel have it.
        if (kernel && fp16_storage_ && device_->has_fp16_storage()) static_cast<GpuKernel&>(*kernel).store_fp16();
        return kernel;
    }

private:
    std::shared_ptr<Device> device_;
    bool fp16_storage_ = false;
};

} // namespace
} // namespace vulkan

std::shared_ptr<DeviceBackend> make_vulkan_backend(int device, bool fp16_storage)
{
    return std::make_shared<vulkan::VulkanBackend>(device, fp16_storage);
}

} // namespace kestrel
